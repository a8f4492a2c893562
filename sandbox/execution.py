"""``code_execution`` tests run by the worker (docs/scoring.md, code execution).

:class:`CodeExecution` is what the pipeline asks for, its command already rendered;
:class:`TestRun` is what the sandbox hands back. The sandbox picks the working directory
and runs ``sh -lc`` under the timeout as the judge; counting tests and recording the
``grader.verification.code_executed`` event are not its business
(:mod:`tasks.evaluation.code_executed`).
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass

from evalfleet.sandbox.command import Command
from evalfleet.sandbox.paths import PathRejected, is_under, sandbox_path
from evalfleet.sandbox.results import ExecResult, FileRead

#: AgentClash's default ``timeout_ms`` of a code_execution validator.
DEFAULT_TIMEOUT_MS = 30_000


@dataclass(frozen=True)
class CodeExecution:
    """One ``code_execution`` validator whose target is a ``file_capture`` check."""

    validator_key: str
    target: str
    """The validator's target, e.g. ``file:solution``."""
    target_path: str
    """The path of the file_capture check the target names."""
    test_command: str
    """The command as run: the pack's, its ``{{ path }}`` placeholders filled."""
    timeout_ms: int = DEFAULT_TIMEOUT_MS
    pass_threshold: float = 1.0
    scoring: str = "fraction_passed"
    output_cap_bytes: int | None = None
    """Cap per output stream; ``None`` means the profile's default."""
    report: str | None = None
    """``junit``: the verdict comes from the JUnit XML report the test writes to
    ``$REPORT`` (where only the judge can write), never from its output or exit code; no
    usable report is one failed test (an evalfleet extension; see :mod:`sandbox.room`)."""
    unresolved: tuple[str, ...] = ()
    """Placeholders the command kept literally (no value in the case)."""
    imports_deliverables: bool = False
    """The pack declares that the test imports the deliverables: in the clean room,
    ``$DELIVERABLES`` (the judge's copy) is on its ``PYTHONPATH`` (:mod:`sandbox.room`)."""


@dataclass(frozen=True)
class TestRun:
    """What running one ``code_execution`` test did: its command's result and, for a test
    with a report, the report it left (read as the judge). Plain facts: what they are worth
    (counts, verdicts) is scoring's to say (:mod:`tasks.evaluation.code_executed`)."""

    __test__ = False  # not a pytest class, whatever its name

    spec: CodeExecution
    result: ExecResult
    report: FileRead | None = None


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


def command_for_test(spec: CodeExecution, workspace: str) -> Command:
    """The exec of a test command: ``sh -lc`` in the §7.3 directory, its caps."""
    return Command(argv=("sh", "-lc", spec.test_command), timeout_s=spec.timeout_ms / 1000,
                   workdir=working_directory(spec.target_path, workspace),
                   output_cap_bytes=spec.output_cap_bytes)


def refused_run(spec: CodeExecution, refused: Exception) -> TestRun:
    """A test that could not run because its files could not be written where the
    candidate's workspace is (full, or something in the way): the candidate's doing, so
    it is a failed run, never the sandbox's failure."""
    why = (f"[evalfleet] the pack's test files could not be written into the workspace "
           f"(what the submission left there is in the way): {refused}").encode()
    return TestRun(spec, ExecResult(exit_code=1, stderr=why))
