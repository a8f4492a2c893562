"""Each section of ``evalfleet check`` judging hand-made runs (the real ones are in
tests/integration/check)."""

from __future__ import annotations

import dataclasses
from typing import Any

from unit.tasks.checking_support import card, code_executed, event, result, subject

from evalfleet.tasks.checking.forgeries.memory import ONLY_VISIBLE
from evalfleet.tasks.checking.report import SectionReport
from evalfleet.tasks.checking.sections import (
    EmptyLoses,
    Environment,
    Flakiness,
    Forgeries,
    ReferenceWins,
    Timing,
    tally,
)
from evalfleet.tasks.messages import FieldProblem, Submission


def messages(report: SectionReport, level: str = "error") -> list[str]:
    return [f.message for f in report.findings if f.level == level]


def test_a_reference_that_wins_every_run_passes() -> None:
    """Five wins: the section passes and lists each run."""
    report = ReferenceWins().judge(subject(), {"reference": [result()] * 5})

    assert report.passed
    assert [row[0] for row in report.rows] == [1, 2, 3, 4, 5]


def test_a_reference_that_does_not_win_one_run_fails_naming_it() -> None:
    """A draw in run 2 and an infra error in run 3 are each an error with the run's index."""
    runs = [result(), result(card(500, "draw", reason="weighted: meh")),
            result(outcome="infra_error", reason="engine gone")]
    report = ReferenceWins().judge(subject(), {"reference": runs})

    assert not report.passed
    assert messages(report) == ["run 2: 500/1000 draw (valid): weighted: meh",
                                "run 3: ended infra_error: engine gone"]


def test_a_degraded_win_is_a_warning_counted_once() -> None:
    """The same degraded reason in every run is one warning naming all runs."""
    report = ReferenceWins().judge(subject(), {"reference": [result(card(validity="degraded"))]
                                               * 3})

    assert report.passed
    assert messages(report, "warning") == [
        "degraded: dimension x is unavailable (all 3 runs)"]


def test_a_validator_whose_verdict_varies_is_flaky() -> None:
    """pass, fail, pass across runs: the validator and its series are named."""
    runs = [result(card(verdicts={"says_42": v})) for v in ("pass", "fail", "pass")]
    report = Flakiness().judge(subject(), {"reference": runs})

    assert messages(report) == ["validator says_42 varies across runs: pass, fail, pass"]
    assert report.rows == [["validator", "says_42", "pass | fail | pass"]]


def test_a_hidden_test_whose_verdict_varies_is_flaky() -> None:
    """A JUnit test that fails on run 2 only, and the counts it changes, are both named."""
    runs = [result(events=[code_executed(passed=p, total=2, cases={"coin": v, "stable": "passed"})])
            for p, v in ((2, "passed"), (1, "failed"), (2, "passed"))]
    report = Flakiness().judge(subject(), {"reference": runs})

    assert messages(report) == [
        "hidden test tests varies across runs: 2/2 passed, 1/2 passed, 2/2 passed",
        "hidden test tests::suite.coin varies across runs: passed, failed, passed"]


def test_stable_verdicts_are_not_flaky() -> None:
    """The same verdicts in every run: passed, with how many verdicts were compared."""
    runs = [result(events=[code_executed(cases={"a": "passed"})])] * 4
    report = Flakiness().judge(subject(), {"reference": runs})

    assert report.passed
    assert messages(report, "info") == ["3 verdicts identical in 4 runs"]


def test_an_empty_submission_that_loses_passes_and_lists_what_it_passed() -> None:
    """A loss is sound; a validator the empty submission passes is a warning."""
    lost = card(100, "loss", verdicts={"says_42": "fail", "no_errors": "pass"})
    report = EmptyLoses().judge(subject(), {"empty": [result(lost)]})

    assert report.passed
    assert messages(report, "warning") == [
        "validator no_errors (contains) passes the empty submission"]


def test_an_empty_submission_that_wins_or_ends_no_contest_is_unsound() -> None:
    """A win is unsound; so is no contest (with a hint how to make it lose)."""
    won = EmptyLoses().judge(subject(), {"empty": [result(card(800, "win"))]})
    void = EmptyLoses().judge(subject(), {"empty": [result(card(None, None, "degraded"))]})

    assert messages(won) == ["the empty submission does not lose: 800/1000 win (valid): "
                             "weighted: fine"]
    assert "no contest is not a loss" in messages(void)[0]


def test_a_failing_setup_command_is_environmental_in_every_run() -> None:
    """The pack's setup command failing is reported once, for every run it failed in."""
    failed = event("sandbox.command.failed", command_index=0, exit_code=127,
                   stderr="sh: 1: make: not found\n", timed_out=False, oom_killed=False)
    runs = {"reference": [result(events=[failed])] * 2, "empty": [result(events=[failed])]}
    report = Environment().judge(subject(), runs)

    assert messages(report) == [
        "setup command 1 exited 127: sh: 1: make: not found (all 3 runs)"]


def test_a_run_the_pack_spoiled_is_environmental_once() -> None:
    """The pipeline's pack-fault reason is the finding; the setup command's own event is
    not reported a second time."""
    failed = event("sandbox.command.failed", command_index=0, exit_code=127,
                   stderr="sh: 1: make: not found\n", timed_out=False, oom_killed=False)
    spoiled = result(card(score=None, result=None, validity="invalid"), events=[failed],
                     reason="pack_error: setup command 1 exited 127: sh: 1: make: not found")
    probed = result(card(score=None, result=None, validity="invalid"),
                    reason="pack environment: no `make` on the sandbox's PATH")
    report = Environment().judge(subject(), {"reference": [spoiled, probed]})

    assert messages(report) == [
        "pack_error: setup command 1 exited 127: sh: 1: make: not found (reference 1)",
        "pack environment: no `make` on the sandbox's PATH (reference 2)"]


def test_a_forgery_that_ended_at_its_own_submission_is_not_counted() -> None:
    """A forgery refused at the intake, or whose files the sandbox could not hold, never
    met the pack's environment: every run that did is "all" the runs."""
    probed = result(card(score=None, result=None, validity="invalid"),
                    reason="pack environment: no `make` on the sandbox's PATH")
    unheld = result(card(score=0, result="loss"), events=[event(
        "grader.submission.refused", path="a/b", reason="the sandbox cannot hold it")])
    intake = result(outcome="rejected", reason="request.submission.events[0].type")
    intake.errors = [FieldProblem(field="request.submission.events[0].type", message="no")]
    runs = {"reference": [probed] * 2, "forgery:files": [unheld], "forgery:events": [intake]}
    report = Environment().judge(subject(), runs)

    assert messages(report) == [
        "pack environment: no `make` on the sandbox's PATH (all 2 runs)"]


def test_a_failing_submission_command_is_not_environmental() -> None:
    """Command index 1 is the submission's (the pack has one setup command): not reported."""
    failed = event("sandbox.command.failed", command_index=1, exit_code=1, stderr="boom")
    report = Environment().judge(subject(), {"reference": [result(events=[failed])]})

    assert report.passed


def test_a_tool_the_reference_needs_and_the_image_lacks_is_environmental() -> None:
    """The reference's own command not found (127): the image's fault, named."""
    failed = event("sandbox.command.failed", command_index=1, exit_code=127,
                   stderr="sh: 1: node: not found\n")
    report = Environment().judge(subject(), {"reference": [result(events=[failed])]})

    assert messages(report) == [
        "command 1 of the submission: not found: sh: 1: node: not found (reference 1)"]


def test_missing_tools_and_timeouts_of_the_reference_tests_are_environmental() -> None:
    """Exit 127, a missing module and a timeout in the reference's tests are reported."""
    runs = {"reference": [
        result(events=[code_executed(exit_code=127, stderr="sh: 1: pytest: not found")]),
        result(events=[code_executed(exit_code=1, stderr="ModuleNotFoundError: No module named "
                                                     "'numpy'\n")]),
        result(events=[code_executed(exit_code=None, timed_out=True)]),
    ]}
    report = Environment().judge(subject(), runs)

    assert messages(report) == [
        "hidden test tests ('run-tests'): not found: sh: 1: pytest: not found (reference 1)",
        "hidden test tests ('run-tests'): ModuleNotFoundError: No module named 'numpy' "
        "(reference 2)",
        "hidden test tests ('run-tests') timed out after 1000 ms (reference 3)"]


def test_what_the_empty_submission_trips_over_is_its_own() -> None:
    """The empty run's tests fail on the missing module: that is the candidate's, not the
    environment's."""
    missing = code_executed(exit_code=2, stderr="No module named 'fizzbuzz'")
    report = Environment().judge(subject(), {"empty": [result(events=[missing])]})

    assert report.passed


def test_limits_the_reference_hits_and_unscored_runs_are_environmental() -> None:
    """An OOM kill of the reference, and any run that ended without a scorecard."""
    runs = {"reference": [result(oom_killed=True)],
            "empty": [result(outcome="rejected", reason="invalid pack")]}
    report = Environment().judge(subject(), runs)

    assert messages(report) == [
        "the reference hit a limit: a command was killed at the memory limit (reference 1)",
        "the run ended rejected: invalid pack (empty 1)"]


def test_timing_reports_the_spread_and_warns_without_headroom() -> None:
    """min/median/max per trial; a reference run past half its wall limit is a warning, and
    the section never fails."""
    runs: dict[str, Any] = {"reference": [result(total_ms=ms) for ms in (1000, 7000, 2000)],
                            "empty": [result(total_ms=500)]}
    report = Timing().judge(subject(), runs)

    assert report.rows == [["reference", 3, 1.0, 2.0, 7.0], ["empty", 1, 0.5, 0.5, 0.5]]
    assert messages(report, "warning") == [
        "a reference run took 7.0 s of its 10 s wall limit: little headroom"]
    assert report.passed and not report.core


def test_a_finding_names_its_runs_compactly() -> None:
    """Runs are grouped per trial, consecutive ones as a span; all runs say so."""
    report = SectionReport(key="k", title="t")
    tally(report, "error", [("a", ("reference", i)) for i in (1, 2, 3, 5)]
          + [("a", ("empty", 1)), ("b", ("reference", 4)), ("b", ("reference", 5))], 6)
    tally(report, "warning", [("c", ("reference", 1)), ("c", ("empty", 1))], 2)

    assert [f.message for f in report.findings] == [
        "a (reference 1-3, 5; empty 1)", "b (reference 4, 5)", "c (all 2 runs)"]


def test_a_memorizer_that_wins_says_the_hidden_tests_show_nothing_new() -> None:
    """Built from a Python reference: when it wins, the check says what that means (the
    hidden tests ask only the visible inputs), besides the win itself."""
    reference = Submission(files={"answer.py": "def answer(n):\n    return 42\n"})
    case = dataclasses.replace(subject(deliverables=["answer.py"]), reference=reference)
    report = Forgeries().judge(case, {"forgery:memorizer": [result(card(1000, "win"))],
                                      "forgery:pytest hook": [result(card(0, "loss"))]})
    found = messages(report)
    assert found[0].startswith("forgery 'memorizer' (the deliverable answers the visible")
    assert found[1] == f"forgery 'memorizer' wins: {ONLY_VISIBLE}"
    assert len(found) == 2 and not report.passed
