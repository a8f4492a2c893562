"""``evalfleet check`` as a pack author runs it: the real sandbox, the worker's runtime.

Fixture packs (``packs/``) are broken on purpose: ``flaky`` fails a hidden test on every
even run (``EVALFLEET_CHECK_RUN``), ``unsound`` lets an empty submission win, ``broken``
needs tools the image lacks. Every example pack must pass. The sandboxes are created by the
CLI under the worker id ``check-test-<pid>`` (their ``evalfleet.worker`` label).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from check_support import evalfleet

from evalfleet.tasks.checking.forgeries.battery import FORGERIES
from evalfleet.tasks.checking.forgeries.memory import FORGERIES as NEED_A_PYTHON_REFERENCE
from evalfleet.tasks.devtools.judge_stub import StubJudgeServer
from evalfleet.workers.devtools.demo import stub_judge_settings

HERE = Path(__file__).parent
EXAMPLES = HERE.parents[2] / "examples" / "packs"
#: The forgeries no sandbox can seed: a loss before any sandbox starts, whatever the pack.
#: The forgeries built for these packs, whose references hold no Python deliverable.
BUILT = [name for name in FORGERIES if name not in NEED_A_PYTHON_REFERENCE]
UNSEEDABLE = ("name past NAME_MAX", "path past PATH_MAX", "file and directory",
              "too many files")


def check_json(pack: Path, *args: str, **settings: str) -> tuple[int, dict[str, Any]]:
    """Exit status and JSON report of ``evalfleet check PACK --format json``."""
    done = evalfleet("check", str(pack), "--format", "json", *args, **settings)
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, json.loads(done.stdout)


#: ``--section`` for every section but the forgery battery, for tests that are not about it.
SECTIONS_BUT_FORGERIES = ("--section", "reference", "--section", "flaky", "--section", "empty",
                          "--section", "environment", "--section", "timing")


def section(report: dict[str, Any], key: str, case: int = 0) -> dict[str, Any]:
    return next(s for s in report["cases"][case]["sections"] if s["key"] == key)


def failing(report: dict[str, Any]) -> list[tuple[int, str, list[Any]]]:
    """Each failed section of each case, with its findings (what a failed check shows)."""
    return [(case, s["key"], s["findings"]) for case, found in enumerate(report["cases"])
            for s in found["sections"] if s.get("passed") is False or any(
                f["level"] == "error" for f in s["findings"])]


def errors(report: dict[str, Any], key: str, case: int = 0) -> list[str]:
    return [f["message"] for f in section(report, key, case)["findings"]
            if f["level"] == "error"]


def test_a_hidden_test_flaky_on_even_runs_is_found(docker_client: Any) -> None:
    """Five runs: the reference loses runs 2 and 4; the test "coin", its counts and its
    validator are each named with their verdict per run; nothing else is blamed. Two runs
    at a time, the report is still in run order."""
    status, report = check_json(HERE / "packs" / "flaky" / "pack.yaml", "--jobs", "2",
                                *SECTIONS_BUT_FORGERIES)

    assert status == 1 and report["passed"] is False
    assert [row[0:4] for row in section(report, "reference")["rows"]] == [
        [1, "scored", 1000, "win"], [2, "scored", 500, "draw"], [3, "scored", 1000, "win"],
        [4, "scored", 500, "draw"], [5, "scored", 1000, "win"]]
    assert errors(report, "flaky") == [
        "validator tests varies across runs: pass, fail, pass, fail, pass",
        "hidden test tests varies across runs: 2/2 passed, 1/2 passed, 2/2 passed, "
        "1/2 passed, 2/2 passed",
        "hidden test tests::suite.coin varies across runs: passed, failed, passed, failed, "
        "passed"]
    assert errors(report, "empty") == errors(report, "environment") == []
    assert report["runtimes"] == [docker_runtime(docker_client)]


def docker_runtime(client: Any) -> str:
    """The runtime ``auto`` resolves to on this engine (gVisor when it is registered)."""
    return "runsc" if "runsc" in (client.info().get("Runtimes") or {}) else "runc"


def test_an_empty_submission_that_wins_is_unsound_in_the_table(docker_client: Any) -> None:
    """The default output is a table: the failed section, the validator the empty submission
    passes, and the verdict; exit 1."""
    done = evalfleet("check", str(HERE / "packs" / "unsound" / "pack.yaml"), "--runs", "2",
                    "-j", "2")

    assert done.returncode == 1, done.stderr
    assert "✓ The reference submission wins every run" in done.stdout
    assert "✗ The empty submission loses" in done.stdout
    assert "validator no_secrets (directory_structure) passes the empty" in done.stdout
    # and every forgery of the battery wins such a pack too (the check lists each), but
    # "grader events", which the intake refuses whatever the pack; the shapes the sandbox
    # cannot seed, each a loss before any sandbox starts (docs/scoring.md §18); and those
    # that leave the (recursive) listing not whole, since a negative check cannot pass on
    # a listing it did not get (§5.18): "padded listing" and "wide tree" (cut at its
    # entry cap), "deep tree" and "deep fifo" (deeper than its tree_depth: it says it left
    # "grader events", which the intake refuses whatever the pack; the shapes the sandbox
    # cannot seed, each a loss before any sandbox starts (docs/scoring.md §18); and those
    # that leave the (recursive) listing not whole, since a negative check cannot pass on
    # a listing it did not get (§5.18): "padded listing" and "wide tree" (cut at its
    # entry cap), "deep tree" and "deep fifo" (deeper than its tree_depth: it says it left
    # them out), "locked tree" (directories it cannot read, named in its error) and, under
    # gVisor (the check's runtime where the engine has it), "sandbox killer" (the memory
    # limit ends the sandbox whole, and its listing fails)
    gvisor = "runsc" in (docker_client.info().get("Runtimes") or {})
    losing = {"grader events", *UNSEEDABLE, "padded listing", "wide tree", "deep tree",
              "deep fifo", "locked tree", *(["sandbox killer"] if gvisor else [])}
    for name in BUILT:
        assert (f"forgery '{name}'" in done.stdout) == (name not in losing), name
    assert f"UNSOUND: {1 + len(BUILT) - len(losing)} problem(s)" in done.stdout


def test_environmental_failures_are_named_with_their_runs(docker_client: Any) -> None:
    """A missing setup tool is found by the sandbox's pre-run check in every run (which then
    goes no further); a missing test runner the check cannot see and a test timeout are
    found in the reference's runs. One finding each, the environment's."""
    status, report = check_json(HERE / "packs" / "broken" / "pack.yaml", "--runs", "2", "-j", "2")

    assert status == 1
    # the intake refuses "grader events", and the sandbox cannot seed the shapes of
    # UNSEEDABLE: none of them meets the pack's environment
    assert errors(report, "environment") == [
        "pack environment: no `no-such-tool` on the sandbox's PATH "
        f"(all {2 + len(BUILT) - len(UNSEEDABLE)} runs)"]

    status, report = check_json(HERE / "packs" / "slow" / "pack.yaml", "--runs", "2", "-j", "2",
                                *SECTIONS_BUT_FORGERIES)  # the findings are the reference's

    assert status == 1
    assert errors(report, "environment") == [
        "hidden test suite (\"sh -c 'no-such-runner --junit'\"): not found: sh: 1: "
        "no-such-runner: not found (reference 1, 2)",
        "hidden test slow ('sleep 30') timed out after 300 ms (reference 1, 2)"]


@pytest.fixture
def stub_judge() -> Iterator[StubJudgeServer]:
    """The scripted judge the demo uses, for the example pack with LLM judges: one per test
    (it starts in milliseconds), so that each pack's check may run on its own xdist worker
    (a module-scoped fixture keeps a module's tests on one, which made these six checks,
    about five minutes, one worker's serial chain)."""
    server = StubJudgeServer().start()
    yield server
    server.stop()


@pytest.mark.parametrize("pack", sorted(p.name for p in EXAMPLES.iterdir()))
def test_every_example_pack_passes_its_check(pack: str, docker_client: Any,
                                             stub_judge: StubJudgeServer) -> None:
    """Each example pack ships a reference that wins three runs of three with the same
    verdicts, an empty submission loses, nothing fails for environmental reasons, and no
    forgery of the battery wins (on the default runtime: gVisor where it is registered).
    Two runs at a time, as a pack author in a hurry runs it."""
    status, report = check_json(EXAMPLES / pack / "pack.yaml", "--jobs", "2", "--runs", "3",
                                **stub_judge_settings(stub_judge.url))

    assert status == 0, failing(report)
    assert report["passed"] and all(report["sections"].values())
    for case in range(len(report["cases"])):
        assert [row[3] for row in section(report, "reference", case)["rows"]] == ["win"] * 3
        assert [row[2] for row in section(report, "empty", case)["rows"]] == ["loss"]
