"""The forgery battery through the whole fleet, on every runtime (issue 21).

Each forgery of ``tasks.checking.forgeries.battery`` implements nothing and tries to win
the example pack ``fizzbuzz-coding`` anyway. Written as a clean-room pack (deliverables, a
probe instead of an import, a JUnit report as the verdict), the pack resists every one of
them. The same pack written the old way — its tests import the candidate's module in the
workspace and their verdict is the output or exit code — is beaten by the forgeries a new
user found on 2026-11-23, which shows the battery is not empty words.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from fleet_support import PrivateFleet, new_id

from evalfleet.scoring import load_pack
from evalfleet.tasks.checking.forgeries.battery import battery, refused, wins
from evalfleet.tasks.checking.leaks import leaked
from evalfleet.tasks.checking.readings import files_refused
from evalfleet.tasks.messages import RunRequest, RunResult, Submission

PACK = Path(__file__).parents[2] / "examples" / "packs" / "fizzbuzz-coding" / "pack.yaml"
#: The forgeries that won the example pack before it was rewritten (the issue's table).
KNOWN_WINNERS = {"pytest hook", "shadowed runner", "config plugin", "exit on import"}
#: The forgeries of issue 39 that a test importing the deliverable lets in: each must win
#: such a pack (a forgery that wins nothing there tests nothing, as the old monkeypatch,
#: which rebound a name pluggy never reads again).
IMPORT_WINNERS = {"framework monkeypatch", "always equal", "registered plugin"}
IN_PROCESS_TEST = """\
import os

from fizzbuzz import fizzbuzz

UPTO = int(os.environ["UPTO"])


def test_numbers_stay_numbers():
    assert fizzbuzz(UPTO)[0:2] == ["1", "2"]


def test_multiples_of_three_and_five():
    assert fizzbuzz(UPTO)[2] == "Fizz" and fizzbuzz(UPTO)[4] == "Buzz"


def test_multiples_of_fifteen():
    assert fizzbuzz(UPTO)[14] == "FizzBuzz"
"""


def clean_room_pack() -> dict[str, Any]:
    found: dict[str, Any] = yaml.safe_load(PACK.read_text())
    return found


def workspace_pack() -> dict[str, Any]:
    """The example pack as it was: tests next to the candidate's files, in-process."""
    old = copy.deepcopy(clean_room_pack())
    sandbox = old["version"]["sandbox"]
    for key in ("deliverables", "probes", "reports"):
        sandbox.pop(key)
    sandbox["test_files"] = {"test_fizzbuzz.py": IN_PROCESS_TEST}
    for validator in old["version"]["evaluation_spec"]["validators"]:
        if validator["key"] == "tests":
            validator["config"]["test_command"] = (
                "UPTO={{ upto }} python3 -m pytest -q -p no:cacheprovider test_fizzbuzz.py")
    return old


def forge(private_fleet: PrivateFleet, runtime: str,
          mapping: dict[str, Any]) -> dict[str, RunResult]:
    """Every forgery of the battery against ``mapping``, through a fleet on ``runtime``."""
    private_fleet.start("forger", ["-c", "2"],
                        profiles=json.dumps({"default": {"runtime": runtime}}))
    client = private_fleet.client()
    forgeries = battery(load_pack(mapping))
    requests = {f.name: RunRequest(run_id=new_id("forgery"), pack=mapping,
                                   submission=f.submission) for f in forgeries}
    client.submit_many(requests.values())
    return {name: client.wait(r.run_id, timeout=240) for name, r in requests.items()}


def test_the_example_pack_resists_every_forgery(private_fleet: PrivateFleet,
                                                runtime: str) -> None:
    """Every forgery is scored, as a loss, with no code_execution validator passing, or
    refused at the intake for what its submission holds (the grader's own events); none
    turns its loss into an infra error or "no result". The shapes the sandbox cannot seed
    are scored before any sandbox starts; no shape may end otherwise than lost."""
    results = forge(private_fleet, runtime, clean_room_pack())
    forgeries = {f.name: f for f in battery(load_pack(clean_room_pack()))}
    assert list(results) == list(forgeries)
    assert [n for n, r in results.items() if refused(r)] == ["grader events"]
    for name, result in results.items():
        assert result.outcome == "scored" or refused(result), (name, result.reason)
        assert refused(result) or files_refused(result) or (
            result.resources["runtime"] == runtime), name
        assert not wins(result, must_lose=forgeries[name].must_lose), (
            name, result.scorecard and result.scorecard.overall_reason)
        assert not leaked(clean_room_pack()["version"]["sandbox"]["test_files"], result), name


@pytest.mark.parametrize("runtime", ["runsc"], indirect=True)
def test_the_battery_beats_a_pack_that_imports_the_candidates_code(
        private_fleet: PrivateFleet, runtime: str) -> None:
    """The old pack: the forgeries of the issue's table win it, so a pack author running
    the battery learns that the pack can be gamed."""
    results = forge(private_fleet, runtime, workspace_pack())
    winners = {name for name, result in results.items() if wins(result)}
    assert winners >= KNOWN_WINNERS | IMPORT_WINNERS, winners
    # and a deliverable imported by the tests can print them into the result
    assert leaked({"test_fizzbuzz.py": IN_PROCESS_TEST}, results["test leak"]) == [
        "test_fizzbuzz.py"]
    assert "blocked seeding" not in winners  # what the candidate leaves never blocks tests


#: Every example pack meets the whole battery in ``evalfleet check``'s forgery section
#: (tests/integration/check/test_check.py, every case, on the default runtime).
EXAMPLES = Path(__file__).parents[2] / "examples" / "packs"


@pytest.mark.parametrize("name", ["fizzbuzz-coding", "cipher-forge-lite"])
def test_running_out_the_clock_is_a_loss(private_fleet: PrivateFleet, runtime: str,
                                         name: str) -> None:
    """A submission that holds its sandbox past the run's wall deadline (its command's
    own timeout set past it) loses: its tests timed out, its evaluator never ran, and
    neither is booked as the fleet's or the pack's error, which would void the run (no
    result instead of a loss)."""
    mapping = yaml.safe_load((EXAMPLES / name / "pack.yaml").read_text())
    forgery = next(f for f in battery(load_pack(mapping)) if f.name == "grader events")
    submission = Submission(files=forgery.submission.files,
                            commands=[{"run": "sleep 600", "timeout_ms": 900_000}])
    private_fleet.start("forger", ["-c", "1"],
                        profiles=json.dumps({"default": {"runtime": runtime}}))
    client = private_fleet.client()
    request = RunRequest(run_id=new_id("clock"), pack=mapping, submission=submission,
                         time_limit_ms=4000)
    client.submit(request)
    result = client.wait(request.run_id, timeout=240)
    assert result.outcome == "scored", result.reason
    assert result.resources["deadline_exceeded"] is True
    assert not wins(result), result.scorecard and result.scorecard.overall_reason
