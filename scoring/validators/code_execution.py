"""code_execution: score the test run the worker recorded for this validator (docs/scoring.md
§5.19, §7.3).

Config (strict): ``{test_command (required, trimmed), timeout_ms > 0 (default 30000),
scoring: "fraction_passed" (default) | "all_or_nothing" | "pass_at_k" (rejected at load),
pass_threshold in [0, 1] (default 1.0)}``. The target ``file:<key>`` names the file_capture
the worker ran the command next to; scoring never reads the file itself, only the
``grader.verification.code_executed`` record whose ``validator_key`` is this validator's
key. The decision, in AgentClash's order:

1. no record ⇒ unavailable;
2. ``execution_error`` ⇒ error, classed ``infra_error`` (the sandbox failed, not the agent);
3. timed out ⇒ score 0;
4. ``fraction_passed`` with counts ⇒ passed / total; ``all_or_nothing`` with counts ⇒ 1 iff
   nothing failed or errored; ``pass_at_k`` ⇒ error (pack_error);
5. otherwise the exit code: 0 ⇒ 1, anything else ⇒ 0; no exit code ⇒ unavailable.

The verdict is pass iff score ≥ pass_threshold, so with the default 1.0 a 2/3 run fails.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Final

from ..compat.textnorm import go_quote
from ..errors import FieldError
from ..record.references import source
from .base import CheckInput, Kind, Outcome, StrictConfig

DEFAULT_TIMEOUT_MS: Final = 30_000
SCORING_MODES: Final = ("fraction_passed", "all_or_nothing", "pass_at_k")
PASS_AT_K_AT_LOAD: Final = "pass_at_k requires multi-sample execution and is not supported yet"
_TEXT_FIELDS: Final = ("validator_key", "target", "target_path", "test_command", "stdout",
                       "stderr", "execution_error")
_COUNT_FIELDS: Final = ("exit_code", "passed_tests", "failed_tests", "error_tests", "total_tests")


class CodeExecutionConfig(StrictConfig):
    """The declared test run; ``null`` fields take their defaults, as in Go."""

    test_command: str | None = None
    timeout_ms: int | None = None
    scoring: str | None = None
    pass_threshold: float | None = None

    @property
    def command(self) -> str:
        return (self.test_command or "").strip()

    @property
    def mode(self) -> str:
        return self.scoring or "fraction_passed"

    @property
    def threshold(self) -> float:
        return 1.0 if self.pass_threshold is None else self.pass_threshold

    @property
    def effective_timeout_ms(self) -> int:
        return self.timeout_ms if self.timeout_ms and self.timeout_ms > 0 else DEFAULT_TIMEOUT_MS


def config_rules(config: CodeExecutionConfig, path: str) -> list[FieldError]:
    """Load-time rules for a decoded config (field paths under ``path``)."""
    errors = []
    if not config.command:
        errors.append(FieldError(f"{path}.test_command", "is required"))
    if config.timeout_ms is not None and config.timeout_ms <= 0:
        errors.append(FieldError(f"{path}.timeout_ms", "must be greater than 0"))
    if config.mode not in SCORING_MODES:
        errors.append(FieldError(f"{path}.scoring",
                                 "must be one of fraction_passed, all_or_nothing, pass_at_k"))
    if config.mode == "pass_at_k":
        errors.append(FieldError(f"{path}.scoring", PASS_AT_K_AT_LOAD))
    if config.pass_threshold is not None and not 0 <= config.pass_threshold <= 1:
        errors.append(FieldError(f"{path}.pass_threshold", "must be between 0 and 1"))
    return errors


def _count(record: Mapping[str, Any], name: str) -> int | None:
    value = record.get(name)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _total(record: Mapping[str, Any]) -> int | None:
    """``total_tests`` when positive, else the sum of the counts present (None if ≤ 0)."""
    declared = _count(record, "total_tests")
    if declared is not None and declared > 0:
        return declared
    present = (_count(record, name) for name in ("passed_tests", "failed_tests", "error_tests"))
    counts = [count for count in present if count is not None]
    return sum(counts) if counts and sum(counts) > 0 else None


def _summary(record: Mapping[str, Any], total: int) -> str:
    passed, failed = _count(record, "passed_tests"), _count(record, "failed_tests")
    errored = _count(record, "error_tests")
    parts = [f"{passed} passed"] if passed is not None else []
    if failed:
        parts.append(f"{failed} failed")
    if errored:
        parts.append(f"{errored} {'error' if errored == 1 else 'errors'}")
    if not parts:
        return f"{total} tests observed"
    return f"{', '.join(parts)} ({total} total)"


def _counted(record: Mapping[str, Any], mode: str) -> tuple[float, str] | None:
    """The score and reason from the test counts, when the mode can use them."""
    total, passed = _total(record), _count(record, "passed_tests")
    if total is None:
        return None
    if mode == "fraction_passed" and passed is not None:
        return passed / total, _summary(record, total)
    if mode == "all_or_nothing":
        clean = not _count(record, "failed_tests") and not _count(record, "error_tests")
        return (1.0 if clean else 0.0), _summary(record, total)
    return None


def _evidence(record: Mapping[str, Any], config: CodeExecutionConfig) -> dict[str, Any]:
    """The recorded run as AgentClash reports it (Go zero values for absent fields)."""
    texts = {name: record.get(name) if isinstance(record.get(name), str) else ""
             for name in _TEXT_FIELDS}
    counts = {name: _count(record, name) for name in _COUNT_FIELDS}
    return {**texts, **counts, "timeout_ms": _count(record, "timeout_ms") or 0,
            "timed_out": record.get("timed_out") is True,
            "pass_threshold": config.threshold, "scoring": config.mode}


def score(record: Mapping[str, Any], config: CodeExecutionConfig) -> Outcome:
    """The outcome of one recorded test run under ``config``."""
    evidence = _evidence(record, config)
    error = record.get("execution_error")
    if isinstance(error, str) and error.strip():
        return Outcome.error(error, **evidence)
    if record.get("timed_out") is True:
        return Outcome.graded(0.0, config.threshold, "test command timed out", **evidence)
    counted = _counted(record, config.mode)
    if counted is not None:
        return Outcome.graded(counted[0], config.threshold, counted[1], **evidence)
    if config.mode == "pass_at_k":
        return Outcome.error("pass_at_k requires multi-sample execution and is not supported "
                             "for single run-agent scoring", **evidence)
    exit_code = _count(record, "exit_code")
    if exit_code is None:
        return Outcome.unavailable("code execution result is unavailable", **evidence)
    return Outcome.graded(1.0 if exit_code == 0 else 0.0, config.threshold,
                          f"test command exited with code {exit_code}", **evidence)


def check(given: CheckInput) -> Outcome:
    record = given.evidence.code_executions.get(given.decl.key)
    if record is None:
        return Outcome.unavailable(
            f"code execution result for validator {go_quote(given.decl.key)} is unavailable")
    config = given.config
    if not isinstance(config, CodeExecutionConfig):
        config = CodeExecutionConfig()
    pointer = given.evidence.sources.get(("code_executions", given.decl.key))
    located = source("tool_call", pointer, given.decl.target) if pointer else None
    return replace(score(record, config), source=located)


KIND = Kind("code_execution", check, config=CodeExecutionConfig, strictness="strict",
            expected="ignored", needs_file_target=True, resolves_target=False,
            config_rules=config_rules, graded=True, go_struct="CodeExecutionConfig",
            go_types={"timeout_ms": "int64", "scoring": "string:scoring.CodeExecutionScoringMode"})
