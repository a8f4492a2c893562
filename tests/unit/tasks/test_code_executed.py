"""A test's run as its ``code_executed`` record: the event's fields, counts from the
output or the report, timeouts, start failures, bounded output."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import pytest

from evalfleet.sandbox.docker import outcome
from evalfleet.sandbox.execution import CodeExecution, TestRun
from evalfleet.sandbox.results import ExecResult, FileRead
from evalfleet.scoring.record import grader_events
from evalfleet.scoring.validators import code_execution
from evalfleet.scoring.validators.code_execution import CodeExecutionConfig
from evalfleet.tasks.evaluation.code_executed import (
    KEPT_OUTPUT_BYTES,
    NO_EVIDENCE,
    kept,
    record,
    report_evidence,
)

SPEC = CodeExecution(validator_key="tests", target="file:sol", target_path="/workspace/sol.py",
                     test_command="pytest -q -x", timeout_ms=1000, pass_threshold=0.5,
                     unresolved=("nope",))
PASSING_REPORT = b'<testsuite tests="1"><testcase name="a"/></testsuite>'


def test_the_payload_has_exactly_the_event_fields_and_reads_back() -> None:
    """The payload carries AgentClash's fields then evalfleet's verdicts, no more, and
    scoring reads it back as written."""
    result = ExecResult(exit_code=1, stdout=b"1 passed, 1 failed", stderr=b"")
    payload = record(TestRun(SPEC, result)).to_event_payload()
    assert tuple(payload) == (*grader_events.CODE_EXECUTION, "test_cases")
    assert payload["passed_tests"] == 1 and payload["total_tests"] == 2
    assert payload["execution_error"] == "" and payload["exit_code"] == 1
    assert payload["test_command"] == "pytest -q -x"
    read = grader_events.code_execution(payload)
    assert read is not None and {k: payload[k] for k in read} == read


def test_a_record_names_the_placeholders_left_in_its_command() -> None:
    assert record(TestRun(SPEC, ExecResult(exit_code=0))).unresolved_placeholders == ("nope",)


def test_timeout_has_no_counts_and_no_exit_code() -> None:
    """A timed-out run records ``timed_out`` and no counts."""
    result = ExecResult(exit_code=137, stdout=b"3 passed", timed_out=True)
    done = record(TestRun(SPEC, result))
    assert done.timed_out and done.exit_code is None and done.total_tests is None


@pytest.mark.parametrize("report", [None, "junit"])
def test_a_test_the_submission_kept_from_starting_fails(report: str | None) -> None:
    """A test that could not start (the sandbox hands that back as a result only when the
    candidate caused it: its files' directory removed, the pids limit used up) fails. As
    an ``execution_error`` it was an ``infra_error`` that voided the run: found by a
    red-team pass, a losing submission could remove the directory and get no result."""
    spec = dataclasses.replace(SPEC, report=report)
    done = record(TestRun(spec, ExecResult(exit_code=None, stdout=b"5 passed",
                                           error="executing sh -lc \"echo '1 passed'\": "
                                                 'chdir to cwd ("/tmp/out") failed'),
                          FileRead(exists=True, content=PASSING_REPORT, size=len(PASSING_REPORT))))
    assert done.execution_error == "" and done.exit_code == 1 and done.stdout == ""
    assert done.stderr == ("[evalfleet] the test could not start: executing sh -lc "
                           "\"echo '1 passed'\": chdir to cwd (\"/tmp/out\") failed")
    assert done.passed_tests == (0 if report else None)  # nothing there was the test's
    judged = code_execution.score(done.to_event_payload(), CodeExecutionConfig(
        test_command="pytest -q -x", pass_threshold=0.5))
    assert (judged.state, judged.verdict, judged.score) == ("available", "fail", 0.0)


def test_a_tests_output_is_kept_as_head_and_tail() -> None:
    """Counts come from all of it; the record keeps a bounded head and tail."""
    assert kept("short") == "short"
    long = "a" * KEPT_OUTPUT_BYTES + "b" * 100_000 + "3 passed in 1s"
    shown = kept(long)
    assert shown.startswith("a" * KEPT_OUTPUT_BYTES) and shown.endswith("3 passed in 1s")
    assert f"[evalfleet] {len(long) - 2 * KEPT_OUTPUT_BYTES} characters left out" in shown
    assert len(shown) < 2 * KEPT_OUTPUT_BYTES + 100
    flood = ExecResult(exit_code=1, stdout=long.encode())
    assert record(TestRun(SPEC, flood)).passed_tests == 3


def test_a_test_with_a_report_is_judged_by_it_not_by_its_output() -> None:
    """Counts of a test with a report are its report's, whatever it printed; without a
    report it is one failed test, and says why."""
    xml = '<testsuite tests="2"><testcase name="a"/><testcase name="b"><skipped/></testcase>' \
          '</testsuite>'
    spec = CodeExecution(validator_key="v", target="file:s", target_path="s",
                         test_command="run", report="junit")
    printed = ExecResult(exit_code=0, stdout=b"9 passed")
    judged = record(TestRun(spec, printed, FileRead(exists=True, size=len(xml),
                                                    content=xml.encode())))
    unproven = record(TestRun(spec, printed, FileRead(exists=False, error="missing")))
    assert (judged.passed_tests, judged.total_tests) == (1, 2)
    assert [v.verdict for v in judged.test_cases] == ["passed", "skipped"]
    assert (unproven.passed_tests, unproven.failed_tests, unproven.total_tests) == (0, 1, 1)
    assert "no evidence, no pass: no report (missing)" in unproven.stderr


def test_a_report_proves_its_counts_and_skips_are_no_passes() -> None:
    xml = ('<testsuite tests="3"><testcase name="a"/><testcase name="b"><failure/></testcase>'
           '<testcase name="c"><skipped/></testcase></testsuite>')
    counts, verdicts, why = report_evidence(FileRead(exists=True, size=len(xml),
                                                     content=xml.encode()))
    assert (counts.passed, counts.failed, counts.total, counts.skipped, why) == (1, 1, 3, 1, "")
    assert [v.verdict for v in verdicts] == ["passed", "failed", "skipped"]


def test_no_usable_report_is_one_failed_test() -> None:
    only_skips = b'<testsuite tests="1"><testcase name="a"><skipped/></testcase></testsuite>'
    cases = {
        "no report (missing)": FileRead(exists=False, error="missing"),
        "not JUnit XML": FileRead(exists=True, size=9, content=b"3 passed\n"),
        "no test that ran": FileRead(exists=True, size=len(only_skips), content=only_skips),
        "larger than its cap": FileRead(exists=True, size=10_000, content=b"<testsuite"),
    }
    for expected, report in cases.items():
        counts, _, why = report_evidence(report)
        assert counts == NO_EVIDENCE and expected in why, (expected, why)
    assert report_evidence(None)[0] == NO_EVIDENCE


@pytest.mark.parametrize(("ended_by", "reason"), [
    (None, "test command timed out"), ("memory", "test command exited with code 137")])
def test_a_test_after_the_sandbox_ended_is_the_candidates_loss(ended_by: str | None,
                                                               reason: str) -> None:
    """Past the wall deadline, or once a gVisor sandbox was killed at its memory limit, a
    test the submission kept from running fails: no ``execution_error`` (an ``infra_error``
    that would void the run and give a losing submission no result)."""
    result = outcome.ended(SimpleNamespace(ended_by=ended_by))  # type: ignore[arg-type]
    done = record(TestRun(SPEC, result))
    assert done.execution_error == ""
    judged = code_execution.score(done.to_event_payload(), CodeExecutionConfig(
        test_command="pytest -q -x", pass_threshold=0.5))
    assert (judged.state, judged.verdict, judged.score, judged.reason) == (
        "available", "fail", 0.0, reason)
