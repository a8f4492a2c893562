"""Hostile packs through a live worker (issue 19, item 4).

Packs are semi-trusted: their authors are not the candidates, but a pack can be wrong or
careless. Each pack here is hostile in one way — a hidden test that prints a gigabyte, a
setup command that forks without end, one that writes 500 MB, an evaluator that never
exits, a capture of ``/proc/self/mem`` or of a FIFO, a listing of ``/`` — and is run with a
submission that would otherwise win. Each must be contained by a limit and end ``scored``
with ``validity: invalid`` and a ``pack_error`` reason: never the candidate's loss, never
``infra_error``, never retried. The worker stays up and the next run scores normally.
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any

from fleet_support import PrivateFleet, new_id, pack

from evalfleet.tasks.messages import RunRequest, RunResult

KiB = 1024
#: A result with a hostile test's output must stay this small (its output is kept once
#: per stream, head and tail, not the whole capped megabyte twice).
SMALL_RESULT = 256 * KiB
#: A listing is bounded by the profile's entry cap (10,000 entries) instead.
LISTING_RESULT = 1024 * KiB
GIGABYTE = 1 << 30


def hostile(**sandbox: Any) -> dict[str, Any]:
    """The one-validator pack of ``fleet_support`` with more in its sandbox block."""
    made = pack()
    made["version"]["sandbox"].update(sandbox)
    return made


def with_checks(made: dict[str, Any], *checks: dict[str, Any],
                validators: tuple[dict[str, Any], ...] = ()) -> dict[str, Any]:
    spec = made["version"]["evaluation_spec"]
    spec["post_execution_checks"] = list(checks)
    spec["validators"] += list(validators)
    return made


def flooding_test() -> dict[str, Any]:
    """A hidden test that prints 1 GB."""
    return with_checks(
        hostile(), {"key": "out", "type": "file_capture", "path": "out.txt"},
        validators=({"key": "tests", "type": "code_execution", "target": "file:out",
                     "config": {"test_command": f"head -c {GIGABYTE} /dev/zero | tr '\\0' x",
                                "timeout_ms": 120_000}},))


def never_ending_evaluator() -> dict[str, Any]:
    """A custom-script evaluator that never exits (its timeout stops it)."""
    made = hostile()
    spec = made["version"]["evaluation_spec"]
    spec["scorecard"] = {"strategy": "weighted", "dimensions": [
        {"key": "correctness", "source": "script", "weight": 1.0}]}
    spec["clawdiators"] = {"evaluator": {
        "runtime": "shell", "timeout_ms": 3000,
        "script": "while :; do :; done\n"}}
    return made


HOSTILE: dict[str, dict[str, Any]] = {
    "fork_bomb_setup": hostile(setup_commands=[
        {"run": "bomb() { bomb | bomb & }; bomb; sleep 600", "timeout_ms": 5000}]),
    "huge_test_file": hostile(setup_commands=[
        {"run": "head -c 500000000 /dev/zero > tests.bin", "timeout_ms": 60_000}]),
    "never_ending_evaluator": never_ending_evaluator(),
    "capture_proc_mem": with_checks(
        hostile(), {"key": "mem", "type": "file_capture", "path": "/proc/self/mem"}),
    "capture_fifo": with_checks(  # the collecting step's stdout: a pipe
        hostile(), {"key": "fifo", "type": "file_capture", "path": "/dev/stdout"}),
    "list_root": with_checks(
        hostile(), {"key": "root", "type": "directory_listing", "path": "/",
                    "recursive": True}),
}

#: A FIFO where the candidate may write could be the candidate's own (planted at the
#: captured path to dodge a loss): contained (never read, nothing hangs), and booked as any
#: file the candidate left there — here the capture is unused and the run an ordinary win.
FIFO_IN_TMP = with_checks(hostile(setup_commands=[{"run": "mkfifo /tmp/pack.fifo"}]),
                          {"key": "fifo", "type": "file_capture", "path": "/tmp/pack.fifo"})


def request(name: str, made: dict[str, Any]) -> RunRequest:
    """A winning submission (it prints "hi") against the pack ``made``."""
    return RunRequest(run_id=new_id(name.replace("_", "-")), pack=copy.deepcopy(made),
                      submission={"commands": [{"run": "echo hi", "timeout_ms": 60_000}]})


#: What each reason must say (after ``pack_error: ``), as a pattern. A contained fork bomb
#: ends its setup command either way the shell dies: at its timeout, or when the pids limit
#: refuses a fork ("exited 2: sh: 1: Cannot fork"); the promise is the containment and the
#: pack's error, not which of the two comes first.
REASONS = {
    "fork_bomb_setup": r"setup command 1 (timed out|exited \d+)",
    "huge_test_file": re.escape("setup command 1 exited 1"),
    "never_ending_evaluator": re.escape("the evaluator did not finish within 3 s"),
    "capture_proc_mem": re.escape("capture `mem` of /proc/self/mem: a kernel pseudo-file"),
    "capture_fifo": re.escape("capture `fifo` of /dev/stdout: a kernel pseudo-file"),
    "list_root": re.escape("listing `root` of /: more than 10000 entries"),
}


def assert_pack_error(name: str, result: RunResult) -> None:
    """No contest, the pack's fault: scored, invalid, a pack_error reason, never retried."""
    card = result.scorecard
    assert result.outcome == "scored", (name, result.outcome, result.reason)
    assert card is not None, name
    assert card.validity == "invalid", (name, card.validity, card.validity_reason)
    assert card.validity_reason.startswith("pack_error: "), (name, card.validity_reason)
    assert re.search(REASONS[name], card.validity_reason), (name, card.validity_reason)
    assert card.result is None and card.score is None, (name, card.result, card.score)
    assert result.attempt == 1, name
    bound = LISTING_RESULT if name == "list_root" else SMALL_RESULT
    assert len(result.to_json()) < bound, (name, len(result.to_json()))


def assert_flood_is_contained(result: RunResult) -> None:
    """A hidden test printing 1 GB is stopped at the output cap and its validator fails;
    the result stays small. It is never no contest: the candidate's code runs under the
    test and could flood it on purpose to void a loss (``tasks/evaluation/pack_faults.py``)."""
    card = result.scorecard
    assert result.outcome == "scored" and card is not None, (result.outcome, result.reason)
    assert not card.validity_reason.startswith("pack_error"), card.validity_reason
    assert {v.key: v.verdict for v in card.validator_details}["tests"] == "fail"
    assert card.result is not None and len(result.to_json()) < SMALL_RESULT


def test_hostile_packs_end_as_the_packs_error(private_fleet: PrivateFleet,
                                              runtime: str) -> None:
    """Each hostile pack is contained and ends as no contest with a ``pack_error`` reason
    (but a flooding hidden test: :func:`assert_flood_is_contained`), under either runtime;
    the worker stays up and the next run (an ordinary pack) is scored normally."""
    node = private_fleet.start("hostile-packs", ["-c", "2"],
                               profiles=json.dumps({"default": {"runtime": runtime}}))
    client = private_fleet.client()
    requests = {name: request(name, made) for name, made in HOSTILE.items()}
    fifo = request("fifo-in-tmp", FIFO_IN_TMP)
    flood = request("flooding-test", flooding_test())
    client.submit_many([*requests.values(), fifo, flood])

    results = {name: client.wait(r.run_id, timeout=300) for name, r in requests.items()}
    planted = client.wait(fifo.run_id, timeout=300)
    flooded = client.wait(flood.run_id, timeout=300)
    after = request("after-hostile-packs", pack())
    client.submit(after)
    normal = client.wait(after.run_id, timeout=60)

    failures = []
    for name, result in results.items():
        assert result.resources["runtime"] == runtime, name
        try:
            assert_pack_error(name, result)
        except AssertionError as failure:
            failures.append(str(failure).splitlines()[0])
    assert not failures, failures
    assert planted.outcome == "scored" and planted.scorecard is not None
    assert (planted.scorecard.validity, planted.scorecard.score) == ("valid", 1000)
    assert_flood_is_contained(flooded)
    assert (normal.outcome, normal.scorecard and normal.scorecard.score) == ("scored", 1000)
    assert node.alive
