"""A pack's own mistake ends the run as no contest (``pack_error``), never the candidate's
loss; what the candidate could have caused stays the candidate's."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from evalfleet.sandbox.plan import PlanResult
from evalfleet.sandbox.profile import Limits, Profile
from evalfleet.sandbox.results import DirectoryListing, ExecResult, ListingEntry
from evalfleet.sandbox.testing.fake import FakeFactory
from evalfleet.tasks.evaluation.pack_faults import pack_fault
from evalfleet.tasks.evaluation.pipeline import PipelineConfig, ProfileBounds, run_pipeline

CONFIG = PipelineConfig(profiles={"default": ProfileBounds(Profile("default", "fake"))})
PACK: dict[str, Any] = {
    "pack": {"slug": "faults"},
    "version": {
        "sandbox": {},
        "evaluation_spec": {
            "name": "faults", "version_number": 1, "judge_mode": "deterministic",
            "validators": [{"key": "hi", "type": "contains", "target": "final_output",
                            "expected_from": "literal:hi"}],
            "scorecard": {"dimensions": ["correctness"]}}},
}


def run(sandbox: dict[str, Any] | None = None, checks: list[dict[str, Any]] | None = None,
        validators: list[dict[str, Any]] | None = None,
        script: dict[str, Any] | None = None, command: str = "echo hi") -> Any:
    """A winning submission ("echo hi") against the pack with ``sandbox`` and ``checks``."""
    pack = copy.deepcopy(PACK)
    pack["version"]["sandbox"].update(sandbox or {})
    spec = pack["version"]["evaluation_spec"]
    spec["post_execution_checks"] = checks or []
    spec["validators"] += validators or []
    body = {"run_id": "r", "pack": pack, "submission": {"commands": [{"run": command}]}}
    return run_pipeline(body, FakeFactory(script=script or {}), CONFIG)


def assert_no_contest(result: Any, reason: str) -> None:
    card = result.scorecard
    assert result.outcome == "scored" and card is not None
    assert (card.validity, card.score, card.result) == ("invalid", None, None)
    assert card.validity_reason == reason == result.reason
    assert result.rating is not None  # no contest: no category, no rating change
    assert (result.rating.category, result.rating.rating_change) == (None, False)


def test_an_ordinary_run_is_untouched() -> None:
    result = run()
    assert result.scorecard is not None
    assert (result.scorecard.validity, result.scorecard.score, result.reason) == (
        "valid", 1000, "")


def test_a_failing_setup_command_is_the_packs_and_the_candidate_never_runs() -> None:
    script = {"make tools": ExecResult(exit_code=2, stderr=b"make: no rule\n")}
    result = run({"setup_commands": [{"run": "make tools"}]}, script=script)
    assert_no_contest(result, "pack_error: setup command 1 exited 2: make: no rule")
    assert result.resources["commands_skipped"] == 1  # the submission's "echo hi"


def test_a_setup_command_that_times_out_is_the_packs() -> None:
    script = {"bomb": ExecResult(exit_code=None, timed_out=True)}
    result = run({"setup_commands": [{"run": "bomb"}]}, script=script)
    assert_no_contest(result, "pack_error: setup command 1 timed out")


def test_pack_files_the_sandbox_cannot_hold_are_the_packs() -> None:
    """The pack's own files refused by the sandbox (a name over 255 bytes: no submission
    file comes near them) are no contest, never the candidate's loss nor our bug."""
    for sandbox in ({"files": {"n" * 256: "x"}},
                    {"files": {"n" * 256: "x"}, "setup_commands": [{"run": "true"}]}):
        result = run(sandbox)
        assert result.reason.startswith("pack_error: the pack's files could not be written: "
                                        "cannot write `nnn")
        assert_no_contest(result, result.reason)
        assert result.resources["commands_skipped"] == len(sandbox.get("setup_commands", [])) + 1


def test_a_missing_tool_of_the_packs_tests_is_its_environment() -> None:
    script = {"environment": ExecResult(exit_code=0, stdout=b"missing pytest\nwritable\n")}
    check = {"key": "out", "type": "file_capture", "path": "out.txt"}
    tests = {"key": "tests", "type": "code_execution", "target": "file:out",
             "config": {"test_command": "pytest -q"}}
    result = run(checks=[check], validators=[tests], script=script)
    assert_no_contest(result, "pack environment: no `pytest` on the sandbox's PATH")


def test_a_test_that_floods_its_output_stays_the_candidates_and_is_kept_small() -> None:
    """The candidate's code runs under the test and could flood it on purpose: never no
    contest (a forgery that would win), and the result stays small."""
    flood = ExecResult(exit_code=137, stdout=b"x" * 1_000_000, stdout_truncated=True)
    check = {"key": "out", "type": "file_capture", "path": "out.txt"}
    tests = {"key": "tests", "type": "code_execution", "target": "file:out",
             "config": {"test_command": "flood"}}
    result = run(checks=[check], validators=[tests], script={"flood": flood})
    assert result.outcome == "scored" and result.scorecard is not None
    assert not result.scorecard.validity_reason.startswith("pack_error")
    verdicts = {v.key: v.verdict for v in result.scorecard.validator_details}
    assert verdicts["tests"] == "fail"  # killed at the cap: the candidate's test failed
    assert len(result.to_json()) < 64 * 1024


def test_a_capture_of_a_kernel_pseudo_file_is_the_packs() -> None:
    check = {"key": "mem", "type": "file_capture", "path": "/proc/self/mem"}
    result = run(checks=[check])
    assert_no_contest(result, "pack_error: capture `mem` of /proc/self/mem: "
                              "a kernel pseudo-file")


def test_an_odd_file_where_the_candidate_writes_stays_the_candidates() -> None:
    """A capture the candidate could have spoiled (its workspace, /tmp) never turns its run
    into no contest."""
    checks = [{"key": "a", "type": "file_capture", "path": "/tmp/../tmp/x"},
              {"key": "b", "type": "directory_listing", "path": "/workspace"}]
    result = run(checks=checks)
    assert result.scorecard is not None and result.scorecard.validity == "valid"


#: Ten entries of a listing of ``/``.
ENTRIES = tuple(ListingEntry(f"/e{index}", 0, False) for index in range(10))


@pytest.mark.parametrize(("listing", "gap"), [
    (DirectoryListing("root", "/", (), 10, truncated=True, error="cannot open directory"),
     "cannot open directory"),
    (DirectoryListing("root", "/", ENTRIES, 10, truncated=True),
     "more than 10 entries"),
    (DirectoryListing("root", "/", ENTRIES[:6], 10, truncated=True, capped=True,
                      error="4 directories could not be read"),
     "more than 10 entries; 4 directories could not be read"),
    (DirectoryListing("root", "/", ENTRIES[:3], 10, truncated=True, dropped=2),
     "2 entries left out (their lines were over 8 KiB)"),
], ids=["failed", "capped", "unread-and-capped", "dropped"])
def test_a_pack_listing_outside_the_workspace_names_every_gap(listing: DirectoryListing,
                                                              gap: str) -> None:
    """A pack's listing of a path the candidate cannot write (``/``) that is not whole is
    the pack's error, its reason naming each gap: the directories it could not read and
    the entry cap hit, both when both."""
    result = PlanResult(sandbox_id="s", profile="p", image="i", limits=Limits(), commands=(),
                        tests=(), checks=(listing,))
    assert pack_fault(result, "/workspace") == f"pack_error: listing `root` of /: {gap}"
