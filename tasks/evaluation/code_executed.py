"""A ``code_execution`` test's run as its record: the ``grader.verification.code_executed``
event, with counts and per-test verdicts read by scoring's rules.

The sandbox hands back what the test did (:class:`~sandbox.execution.TestRun`); this module
counts (:mod:`scoring.record.tally`: from the output, or from the JUnit report of a test
that has one) and keeps a bounded head and tail of each output stream.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any

from evalfleet.sandbox.execution import TestRun
from evalfleet.sandbox.results import FileRead, text
from evalfleet.scoring.record import (
    TestCounts,
    TestVerdict,
    grader_events,
    junit_verdicts,
    parse_counts,
    strict_junit,
)

#: How much of each output stream of a test the record keeps: this many characters of its
#: head and as many of its tail (counts are parsed from all of it first). The record is
#: stored twice in a result (its event and its validator's evidence): a test that prints up
#: to its output cap must not make the result megabytes long.
KEPT_OUTPUT_BYTES = 8 * 1024
#: What a test with a report counts as when there is no usable report: one failed test.
NO_EVIDENCE = TestCounts(passed=0, failed=1, errors=0, total=1)


@dataclass(frozen=True)
class CodeExecutionRecord:
    """The ``grader.verification.code_executed`` record, plus JUnit verdicts."""

    validator_key: str
    target: str
    target_path: str
    test_command: str
    timeout_ms: int
    exit_code: int | None
    stdout: str
    stderr: str
    timed_out: bool
    execution_error: str
    passed_tests: int | None
    failed_tests: int | None
    error_tests: int | None
    total_tests: int | None
    pass_threshold: float
    scoring: str
    test_cases: tuple[TestVerdict, ...] = ()
    truncated: bool = False
    unresolved_placeholders: tuple[str, ...] = ()
    duration_s: float = 0.0

    def to_event_payload(self) -> dict[str, Any]:
        """The event's payload (:func:`scoring.record.grader_events.code_executed`)."""
        return grader_events.code_executed(asdict(self), [asdict(t) for t in self.test_cases])


def record(run: TestRun) -> CodeExecutionRecord:
    """The record of a test's run: counts from its output, or from its report when it has
    one (and it did not time out); a test that could not start is a failed one."""
    result = run.result
    if result.error:
        return unstarted(run)
    if run.spec.report and not result.timed_out:
        return _from_report(run)
    stdout, stderr = text(result.stdout), text(result.stderr)
    counts = None if result.timed_out else parse_counts(stdout, stderr)
    return _record(run, stdout, stderr, counts,
                   junit_verdicts(stdout, stderr) if counts else (),
                   exit_code=None if result.timed_out else result.exit_code)


def unstarted(run: TestRun) -> CodeExecutionRecord:
    """The record of a test that could not start: a failed run, with why on ``stderr``.

    By the sandbox's contract a start failure that comes back as a result (not raised) is
    the candidate's doing: its files' directory removed, the pids limit used up. As
    AgentClash's ``execution_error`` it would void the run (an infra error: no result),
    turning the candidate's loss into no contest. Nothing is counted: the test never ran,
    and the engine's words for why may quote the test's command (``echo '1 passed'``)."""
    why = f"[evalfleet] the test could not start: {run.result.error}"
    failed = replace(run, result=replace(run.result, exit_code=1, error=None))
    return _record(failed, "", why, NO_EVIDENCE if run.spec.report else None, (), exit_code=1)


def _from_report(run: TestRun) -> CodeExecutionRecord:
    """The record of a test whose verdict is its report's: counts and per-test verdicts
    from the report; without a usable one, one failed test and why (in ``stderr``)."""
    counts, verdicts, why = report_evidence(run.report)
    stderr = text(run.result.stderr) + (f"\n[evalfleet] no evidence, no pass: {why}"
                                        if why else "")
    return _record(run, text(run.result.stdout), stderr, counts, verdicts,
                   exit_code=run.result.exit_code)


def _record(run: TestRun, stdout: str, stderr: str, counts: TestCounts | None,
            verdicts: tuple[TestVerdict, ...], *, exit_code: int | None) -> CodeExecutionRecord:
    spec, result = run.spec, run.result
    return CodeExecutionRecord(
        validator_key=spec.validator_key, target=spec.target, target_path=spec.target_path,
        test_command=spec.test_command, timeout_ms=spec.timeout_ms, exit_code=exit_code,
        stdout=kept(stdout), stderr=kept(stderr), timed_out=result.timed_out,
        execution_error=result.error or "",
        passed_tests=counts.passed if counts else None,
        failed_tests=counts.failed if counts else None,
        error_tests=counts.errors if counts else None,
        total_tests=counts.total if counts else None,
        pass_threshold=spec.pass_threshold, scoring=spec.scoring, test_cases=verdicts,
        truncated=result.truncated, unresolved_placeholders=spec.unresolved,
        duration_s=result.duration_s)


def kept(output: str, keep: int = KEPT_OUTPUT_BYTES) -> str:
    """``output`` as a record keeps it: whole when short, else its head and its tail (each
    ``keep`` characters) around a line that says how much was left out."""
    if len(output) <= 2 * keep:
        return output
    cut = len(output) - 2 * keep
    return f"{output[:keep]}\n[evalfleet] {cut} characters left out\n{output[-keep:]}"


def report_evidence(report: FileRead | None) -> tuple[TestCounts, tuple[TestVerdict, ...], str]:
    """Counts and verdicts of a JUnit report (skipped tests are not passes), or
    :data:`NO_EVIDENCE` and why."""
    if report is None or not report.exists:
        return NO_EVIDENCE, (), f"no report ({report.error if report else 'not read'})"
    if report.size > len(report.content):
        return NO_EVIDENCE, (), "the report is larger than its cap"
    found = strict_junit(report.content.decode(errors="replace"))
    if found is None:
        return NO_EVIDENCE, (), "the report is not JUnit XML"
    counts, verdicts = found
    if counts.total - counts.skipped <= 0:
        return NO_EVIDENCE, verdicts, "the report shows no test that ran"
    return counts, verdicts, ""
