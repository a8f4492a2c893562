"""``code_execution`` validators run by the worker (scoring-semantics §7.3).

:class:`CodeExecution` is what the pipeline asks for; :class:`CodeExecutionRecord` is what
the ``grader.verification.code_executed`` event carries, plus per-test JUnit verdicts.
The sandbox renders the command, picks the working directory, runs ``sh -lc`` under the
timeout and parses counts; scoring decides what the record is worth.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sandbox.command import Command
from sandbox.counts import TestCounts, TestVerdict, junit_verdicts, parse_counts, strict_junit
from sandbox.paths import PathRejected, is_under, sandbox_path
from sandbox.results import ExecResult, FileRead, text
from sandbox.template import render

#: AgentClash's default ``timeout_ms`` of a code_execution validator.
DEFAULT_TIMEOUT_MS = 30_000
#: How much of each output stream of a test the record keeps: this many bytes of its head
#: and as many of its tail (counts are parsed from all of it first). The record is stored
#: twice in a result (its event and its validator's evidence): a test that prints up to its
#: output cap must not make the result megabytes long.
KEPT_OUTPUT_BYTES = 8 * 1024


@dataclass(frozen=True)
class CodeExecution:
    """One ``code_execution`` validator whose target is a ``file_capture`` check."""

    validator_key: str
    target: str
    """The validator's target, e.g. ``file:solution``."""
    target_path: str
    """The path of the file_capture check the target names."""
    test_command: str
    timeout_ms: int = DEFAULT_TIMEOUT_MS
    pass_threshold: float = 1.0
    scoring: str = "fraction_passed"
    output_cap_bytes: int | None = None
    """Cap per output stream; ``None`` means the profile's default."""
    report: str | None = None
    """``junit``: the verdict comes from the JUnit XML report the test writes to
    ``$REPORT`` (where only the judge can write), never from its output or exit code; no
    usable report is one failed test (an evalfleet extension; see :mod:`sandbox.room`)."""


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
        """The event payload: exactly the §7.3 fields."""
        return {name: getattr(self, name) for name in EVENT_FIELDS}


EVENT_FIELDS = ("validator_key", "target", "target_path", "test_command", "timeout_ms",
                "exit_code", "stdout", "stderr", "timed_out", "execution_error",
                "passed_tests", "failed_tests", "error_tests", "total_tests",
                "pass_threshold", "scoring")


def working_directory(target_path: str, workspace: str) -> str:
    """The §7.3 rule: the captured file's directory, or the workspace for ``.``, ``/``,
    empty, relative or anything under the workspace."""
    try:
        directory = posixpath.dirname(sandbox_path(target_path, workspace))
    except PathRejected:
        return workspace
    if directory in {"", ".", "/"} or is_under(directory, workspace):
        return workspace
    return directory


def command_for_test(spec: CodeExecution, command: str, workspace: str) -> Command:
    """The exec of a rendered test command: ``sh -lc`` in the §7.3 directory, its caps."""
    return Command(argv=("sh", "-lc", command), timeout_s=spec.timeout_ms / 1000,
                   workdir=working_directory(spec.target_path, workspace),
                   output_cap_bytes=spec.output_cap_bytes)


def shell_command(spec: CodeExecution, context: Mapping[str, Any]) -> tuple[str, tuple[str, ...]]:
    """The rendered test command and the placeholders that stayed unresolved."""
    rendered = render(spec.test_command, context)
    return rendered.text, rendered.unresolved


def record(spec: CodeExecution, command: str, result: ExecResult,
           unresolved: tuple[str, ...] = (), report: FileRead | None = None) -> CodeExecutionRecord:
    """Turn the test command's :class:`ExecResult` (and, for a test with a report, the
    report it wrote) into the event record."""
    stdout, stderr = text(result.stdout), text(result.stderr)
    if spec.report and not (result.timed_out or result.error):
        return _from_report(spec, command, result, unresolved, report)
    counts = None if result.timed_out or result.error else parse_counts(stdout, stderr)
    return CodeExecutionRecord(
        validator_key=spec.validator_key, target=spec.target, target_path=spec.target_path,
        test_command=command, timeout_ms=spec.timeout_ms,
        exit_code=None if result.timed_out else result.exit_code,
        stdout=kept(stdout), stderr=kept(stderr), timed_out=result.timed_out,
        execution_error=result.error or "",
        passed_tests=counts.passed if counts else None,
        failed_tests=counts.failed if counts else None,
        error_tests=counts.errors if counts else None,
        total_tests=counts.total if counts else None,
        pass_threshold=spec.pass_threshold, scoring=spec.scoring,
        test_cases=junit_verdicts(stdout, stderr) if counts else (),
        truncated=result.truncated, unresolved_placeholders=unresolved,
        duration_s=result.duration_s)


def _from_report(spec: CodeExecution, command: str, result: ExecResult,
                 unresolved: tuple[str, ...], report: FileRead | None) -> CodeExecutionRecord:
    """The record of a test whose verdict is its report's: counts and per-test verdicts
    from the report; without a usable one, one failed test and why (in ``stderr``)."""
    counts, verdicts, why = report_evidence(report)
    stderr = text(result.stderr) + (f"\n[evalfleet] no evidence, no pass: {why}" if why else "")
    return CodeExecutionRecord(
        validator_key=spec.validator_key, target=spec.target, target_path=spec.target_path,
        test_command=command, timeout_ms=spec.timeout_ms, exit_code=result.exit_code,
        stdout=kept(text(result.stdout)), stderr=kept(stderr), timed_out=False,
        execution_error="",
        passed_tests=counts.passed, failed_tests=counts.failed, error_tests=counts.errors,
        total_tests=counts.total, pass_threshold=spec.pass_threshold, scoring=spec.scoring,
        test_cases=verdicts, truncated=result.truncated, unresolved_placeholders=unresolved,
        duration_s=result.duration_s)


def kept(output: str, keep: int = KEPT_OUTPUT_BYTES) -> str:
    """``output`` as a record keeps it: whole when short, else its head and its tail (each
    ``keep`` characters) around a line that says how much was left out."""
    if len(output) <= 2 * keep:
        return output
    cut = len(output) - 2 * keep
    return f"{output[:keep]}\n[evalfleet] {cut} characters left out\n{output[-keep:]}"


#: What a test with a report counts as when there is no usable report: one failed test.
NO_EVIDENCE = TestCounts(passed=0, failed=1, errors=0, total=1)


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


def refused_record(spec: CodeExecution, context: Mapping[str, Any],
                   refused: Exception) -> CodeExecutionRecord:
    """A test that could not run because its files could not be written where the
    candidate's workspace is (full, or something in the way): the candidate's doing, so
    it counts as a failed run, never as the sandbox's failure."""
    command, unresolved = shell_command(spec, context)
    why = (f"[evalfleet] the pack's test files could not be written into the workspace "
           f"(what the submission left there is in the way): {refused}").encode()
    return record(spec, command, ExecResult(exit_code=1, stderr=why), unresolved)
