"""code_execution (docs/scoring.md §5.19, §7.3): scoring the recorded test run; strict config;
pass_at_k."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from unit.scoring.helpers import run_one
from unit.scoring.validators.grader_events import JSON_VALUES, captured, executed, spec_body

from evalfleet.scoring.errors import FieldError
from evalfleet.scoring.run.records import ValidatorResult
from evalfleet.scoring.spec.models import EvaluationSpec
from evalfleet.scoring.spec.rules import validate_spec
from evalfleet.scoring.validators import code_execution

PATH = "evaluation_spec.validators[0].config"
CONFIG = {"test_command": "pytest -q"}


def scored(config: Any = None, *events: dict[str, Any]) -> ValidatorResult:
    """Run code_execution (key ``v``, target ``file:code``) over the given events."""
    return run_one("code_execution", None, config=CONFIG if config is None else config,
                   target="file:code", events=[captured("code", "print(1)"), *events])


@pytest.mark.parametrize(("config", "record", "score", "verdict", "reason"), [
    (None, {"exit_code": 1, "passed_tests": 2, "failed_tests": 1}, 2 / 3, "fail",
     "2 passed, 1 failed (3 total)"),
    ({**CONFIG, "pass_threshold": 0.6}, {"passed_tests": 2, "failed_tests": 1}, 2 / 3, "pass",
     "2 passed, 1 failed (3 total)"),
    (None, {"passed_tests": 3, "total_tests": 4, "error_tests": 1}, 0.75, "fail",
     "3 passed, 1 error (4 total)"),
    (None, {"passed_tests": 2, "total_tests": 0, "error_tests": 2}, 0.5, "fail",
     "2 passed, 2 errors (4 total)"),
    (None, {"passed_tests": 5, "failed_tests": 0, "exit_code": 0}, 1.0, "pass",
     "5 passed (5 total)"),
    (None, {"failed_tests": 2, "exit_code": 0}, 1.0, "pass", "test command exited with code 0"),
    (None, {"passed_tests": 0, "failed_tests": 0, "exit_code": 3}, 0.0, "fail",
     "test command exited with code 3"),
    (None, {"exit_code": 0}, 1.0, "pass", "test command exited with code 0"),
    (None, {"exit_code": 2}, 0.0, "fail", "test command exited with code 2"),
    ({**CONFIG, "scoring": "all_or_nothing"}, {"passed_tests": 2, "failed_tests": 1}, 0.0,
     "fail", "2 passed, 1 failed (3 total)"),
    ({**CONFIG, "scoring": "all_or_nothing"}, {"passed_tests": 4, "exit_code": 1}, 1.0, "pass",
     "4 passed (4 total)"),
    ({**CONFIG, "scoring": "all_or_nothing"}, {"failed_tests": 0, "total_tests": 3}, 1.0, "pass",
     "3 tests observed"),
    ({**CONFIG, "scoring": "all_or_nothing"}, {"exit_code": 1}, 0.0, "fail",
     "test command exited with code 1"),
    ({**CONFIG, "scoring": "weird"}, {"passed_tests": 1, "failed_tests": 1, "exit_code": 0}, 1.0,
     "pass", "test command exited with code 0"),
    (None, {"timed_out": True, "passed_tests": 3, "exit_code": 0}, 0.0, "fail",
     "test command timed out"),
    ({**CONFIG, "pass_threshold": 0}, {"timed_out": True}, 0.0, "pass", "test command timed out"),
    ({**CONFIG, "pass_threshold": 0}, {"exit_code": 1}, 0.0, "pass",
     "test command exited with code 1"),
    # A record Go cannot decode into CodeExecutionResult is ignored, as if never sent.
    (None, {"exit_code": True, "passed_tests": "3"}, None, "",
     'code execution result for validator "v" is unavailable'),
])
def test_scoring(config: Any, record: dict[str, Any], score: float | None, verdict: str,
                 reason: str) -> None:
    """Counts first (fraction or all-or-nothing), then exit code; pass iff score ≥ threshold."""
    result = scored(config, executed("v", **record))

    assert (result.normalized_score, result.verdict, result.reason) == (
        pytest.approx(score) if score is not None else None, verdict, reason)


def test_no_record_is_unavailable() -> None:
    """Without a code_executed event for this validator key the result is unavailable."""
    result = scored(None, executed("other", exit_code=0))

    assert (result.state, result.outcome_class) == ("unavailable", "unavailable")
    assert result.reason == 'code execution result for validator "v" is unavailable'


def test_no_exit_code_is_unavailable() -> None:
    """A record with neither counts nor an exit code is unavailable."""
    result = scored(None, executed("v"))

    assert (result.state, result.reason) == ("unavailable", "code execution result is unavailable")


@pytest.mark.parametrize("error", ["sandbox exec failed: connection reset", " oom "])
def test_execution_error_is_infra_error(error: str) -> None:
    """A non-blank execution_error is an error classed infra_error, before timeout or counts."""
    result = scored(None, executed("v", execution_error=error, timed_out=True, exit_code=0))

    assert (result.state, result.verdict, result.normalized_score) == ("error", "error", None)
    assert (result.outcome_class, result.reason) == ("infra_error", error)


def test_blank_execution_error_is_ignored() -> None:
    """A whitespace-only execution_error does not count as an error."""
    assert scored(None, executed("v", execution_error="  ", exit_code=0)).verdict == "pass"


def test_pass_at_k_at_run_time_is_pack_error() -> None:
    """pass_at_k reaching run time (no counts to use) is a pack error, not an infra error."""
    result = scored({**CONFIG, "scoring": "pass_at_k"}, executed("v", exit_code=0))

    assert (result.state, result.outcome_class) == ("error", "pack_error")
    assert result.reason.startswith("pass_at_k requires multi-sample execution")


def test_later_record_wins_and_evidence_is_recorded() -> None:
    """The last record for the key is scored, and its fields are kept as evidence."""
    result = scored({**CONFIG, "pass_threshold": 0.5},
                    executed("v", exit_code=1, stdout="1 failed"),
                    executed("v", exit_code=0, stdout="3 passed", passed_tests=3))
    evidence = result.evidence

    assert result.reason == "3 passed (3 total)"
    assert (evidence["stdout"], evidence["exit_code"], evidence["pass_threshold"],
            evidence["scoring"], evidence["timed_out"]) == ("3 passed", 0, 0.5,
                                                            "fraction_passed", False)


@pytest.mark.parametrize(("config", "errors"), [
    ({"test_command": " pytest "}, []),
    ({"test_command": "pytest", "timeout_ms": 5, "scoring": "all_or_nothing",
      "pass_threshold": 0}, []),
    ({}, [FieldError(f"{PATH}.test_command", "is required")]),
    ({"test_command": "  \t"}, [FieldError(f"{PATH}.test_command", "is required")]),
    ({"test_command": None, "scoring": None}, [FieldError(f"{PATH}.test_command", "is required")]),
    ({"test_command": "t", "timeout_ms": 0},
     [FieldError(f"{PATH}.timeout_ms", "must be greater than 0")]),
    ({"test_command": "t", "scoring": "pass@k"},
     [FieldError(f"{PATH}.scoring", "must be one of fraction_passed, all_or_nothing, pass_at_k")]),
    ({"test_command": "t", "scoring": "pass_at_k"},
     [FieldError(f"{PATH}.scoring",
                 "pass_at_k requires multi-sample execution and is not supported yet")]),
    ({"test_command": "t", "pass_threshold": 1.5},
     [FieldError(f"{PATH}.pass_threshold", "must be between 0 and 1")]),
    ({"test_command": "t", "pass_threshold": -0.1},
     [FieldError(f"{PATH}.pass_threshold", "must be between 0 and 1")]),
])
def test_config_rules(config: dict[str, Any], errors: list[FieldError]) -> None:
    """Load time: test_command required, timeout_ms > 0, scoring known, pass_at_k rejected."""
    model, problem = code_execution.KIND.decode_config(config)

    assert problem is None
    assert code_execution.KIND.config_rules is not None
    assert code_execution.KIND.config_rules(model, PATH) == errors


@pytest.mark.parametrize(("config", "fragment"), [
    ({"test_command": "t", "timeout": 5}, 'unknown field "timeout"'),
    ({"test_command": "t", "timeout_ms": 1.5},
     "json: cannot unmarshal number 1.5 into Go struct field CodeExecutionConfig.timeout_ms"
     " of type int64"),
    ({"test_command": "t", "pass_threshold": True},
     "json: cannot unmarshal bool into Go struct field CodeExecutionConfig.pass_threshold"
     " of type float64"),
])
def test_strict_decoding(config: dict[str, Any], fragment: str) -> None:
    """Unknown keys and wrong types are rejected (load time, and as a pack error at run time)."""
    _, problem = code_execution.KIND.decode_config(config)
    result = scored(config, executed("v", exit_code=0))

    assert problem is not None and fragment in problem
    assert (result.state, result.outcome_class) == ("error", "pack_error")


def test_validate_spec_rejects_pass_at_k() -> None:
    """Through validate_spec: pass_at_k is reported at the config's scoring field."""
    spec = EvaluationSpec.model_validate(spec_body(
        {"key": "tests", "type": "code_execution", "target": "file:code",
         "config": {"test_command": "pytest", "scoring": "pass_at_k"}},
        post_execution_checks=[{"key": "code", "type": "file_capture", "path": "/w/a.py"}]))

    assert [str(error) for error in validate_spec(spec)] == [
        f"{PATH}.scoring pass_at_k requires multi-sample execution and is not supported yet"]


@given(record=st.dictionaries(st.sampled_from(
    ["exit_code", "passed_tests", "failed_tests", "error_tests", "total_tests", "timed_out",
     "execution_error", "stdout"]), JSON_VALUES, max_size=6),
    threshold=st.floats(allow_nan=False), scoring=st.text(max_size=15))
def test_never_raises(record: dict[str, Any], threshold: float, scoring: str) -> None:
    """Arbitrary records and configs give a result, never an exception."""
    config = {"test_command": "t", "pass_threshold": threshold, "scoring": scoring}
    result = scored(config, executed("v", **record))

    assert result.state in {"available", "unavailable", "error"}
