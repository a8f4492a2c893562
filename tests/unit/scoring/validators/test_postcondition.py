"""postcondition (docs/scoring.md §5.21): a condition on a captured file, with its own missing-file
rules."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from unit.scoring.helpers import T0, completed, run_one, spec_with

from evalfleet.scoring.errors import FieldError
from evalfleet.scoring.run.records import ValidatorResult
from evalfleet.scoring.spec.rules import validate_spec
from evalfleet.scoring.validators.postcondition import KIND, PostconditionConfig

CONFIG_JSON = '{"name": "svc", "port": 8080, "ratio": 0.5, "tags": ["a", "b"]}'


def captured(content: str | None, exists: bool = True) -> list[dict[str, Any]]:
    """Run events with one capture of key ``out``."""
    payload: dict[str, Any] = {"key": "out", "path": "/workspace/out.json", "exists": exists}
    if content is not None:
        payload["content"] = content
    return [completed("done"), {"type": "grader.verification.file_captured",
                                "occurred_at": T0, "payload": payload}]


def run_post(config: Any, content: str | None = CONFIG_JSON, exists: bool = True,
             events: list[dict[str, Any]] | None = None) -> ValidatorResult:
    """Run a postcondition on file ``out``."""
    return run_one("postcondition", None, None, config, target="file:out",
                   events=events if events is not None else captured(content, exists))


CASES: list[tuple[dict[str, Any], str, str]] = [
    ({"condition": "exists"}, CONFIG_JSON, "pass"),
    ({"condition": "not_exists"}, CONFIG_JSON, "fail"),
    ({"condition": "exists"}, "", "pass"),
    ({"condition": "contains", "value": "8080"}, CONFIG_JSON, "pass"),
    ({"condition": "contains", "value": "9090"}, CONFIG_JSON, "fail"),
    ({"condition": "not_contains", "value": "password"}, CONFIG_JSON, "pass"),
    ({"condition": "not_contains", "value": "svc"}, CONFIG_JSON, "fail"),
    ({"condition": "regex_match", "value": r'"port":\s*\d+'}, CONFIG_JSON, "pass"),
    ({"condition": "regex_match", "value": r"^\d+$"}, "123\n", "fail"),
    ({"condition": "equals", "value": "hello\n"}, "hello\n", "pass"),
    ({"condition": "equals", "value": "hello"}, "hello\n", "fail"),
    ({"condition": "equals", "value": {"port": 8080, "ratio": 0.5, "tags": ["a", "b"],
                                       "name": "svc"}}, CONFIG_JSON, "pass"),
    ({"condition": "equals", "value": {"port": 8080}}, CONFIG_JSON, "fail"),
    ({"condition": "equals", "value": 42}, " 42.0 ", "pass"),
    ({"condition": "equals", "value": 42}, '"42"', "fail"),
    ({"condition": "json_path_match", "json_path": "$.port", "value": 8080}, CONFIG_JSON, "pass"),
    ({"condition": "json_path_match", "json_path": "$.port", "value": 8080.0}, CONFIG_JSON,
     "pass"),
    ({"condition": "json_path_match", "json_path": "$.tags[1]", "value": "b"}, CONFIG_JSON,
     "pass"),
    ({"condition": "json_path_match", "json_path": "$.name", "value": "other"}, CONFIG_JSON,
     "fail"),
    ({"condition": "json_path_match", "json_path": "$.nope", "value": 1}, CONFIG_JSON, "fail"),
]


@pytest.mark.parametrize(("config", "content", "verdict"), CASES)
def test_conditions_on_an_existing_file(config: dict[str, Any], content: str,
                                        verdict: str) -> None:
    """Each condition on a captured file; JSON values compare by json_path_match equality."""
    result = run_post(config, content)

    assert (result.state, result.verdict) == ("available", verdict)
    assert result.normalized_score == (1.0 if verdict == "pass" else 0.0)


def test_unresolved_json_path_reason() -> None:
    """A json_path that does not resolve fails with json_path_match's reason."""
    result = run_post({"condition": "json_path_match", "json_path": "$.nope", "value": 1})

    assert result.reason == "json path did not resolve to a value"


@pytest.mark.parametrize(("condition", "state", "verdict"), [
    ({"condition": "exists"}, "available", "fail"),
    ({"condition": "not_exists"}, "available", "pass"),
    ({"condition": "contains", "value": "x"}, "unavailable", ""),
    ({"condition": "equals", "value": "x"}, "unavailable", ""),
    ({"condition": "json_path_match", "json_path": "$", "value": 1}, "unavailable", ""),
])
def test_capture_says_file_does_not_exist(condition: dict[str, Any], state: str,
                                          verdict: str) -> None:
    """exists=false: exists fails, not_exists passes, anything else is unavailable."""
    result = run_post(condition, None, exists=False)

    assert (result.state, result.verdict) == (state, verdict)


@pytest.mark.parametrize("condition", ["exists", "not_exists"])
def test_no_capture_event_is_unavailable(condition: str) -> None:
    """No capture event at all (reason says "unavailable"): unavailable even for exists."""
    result = run_post({"condition": condition}, events=[completed("done")])

    assert (result.state, result.reason) == ("unavailable",
                                             'file capture key "out" is unavailable')


@pytest.mark.parametrize(("config", "content", "outcome_class", "reason"), [
    ({"condition": "equals", "value": {"a": 1}}, "{not json", "evaluator_error",
     "parse postcondition target as JSON: invalid character 'n' looking for beginning of "
     "object key string"),
    ({"condition": "json_path_match", "json_path": "$.a", "value": 1}, "1 2",
     "evaluator_error", "parse actual JSON document: multiple JSON values are not allowed"),
    ({"condition": "json_path_match", "json_path": "$.", "value": 1}, CONFIG_JSON,
     "pack_error", "evaluate JSONPath expression: missing property name at position 2"),
    # Load-time validation rejects the configs below first; run directly, AgentClash's
    # classes apply: "parse postcondition config" is not a pack-author prefix.
    (None, CONFIG_JSON, "evaluator_error", "parse postcondition config: EOF"),
    ({"condition": "exists", "extra": 1}, CONFIG_JSON, "evaluator_error",
     'parse postcondition config: json: unknown field "extra"'),
    ({"condition": "sometimes"}, CONFIG_JSON, "pack_error",
     "invalid postcondition config: config.condition must be one of exists, not_exists, "
     "contains, not_contains, regex_match, json_path_match, equals"),
    ({"condition": "regex_match", "value": "(a)\\1"}, CONFIG_JSON, "pack_error",
     "invalid postcondition config: config.value must be a valid regex: error parsing "
     "regexp: invalid escape sequence: `\\1`"),
])
def test_errors(config: Any, content: str, outcome_class: str, reason: str) -> None:
    """Malformed JSON targets are the agent's errors; bad configs are the pack's (mostly)."""
    result = run_post(config, content)

    assert (result.state, result.outcome_class, result.reason) == ("error", outcome_class,
                                                                   reason)


P = "c"
RULES: list[tuple[dict[str, Any], list[FieldError]]] = [
    ({"condition": "exists"}, []),
    ({}, [FieldError("c.condition", "is required")]),
    ({"condition": "maybe"}, [FieldError(
        "c.condition", "must be one of exists, not_exists, contains, not_contains, "
        "regex_match, json_path_match, equals")]),
    ({"condition": "not_exists", "value": "x", "json_path": "$"}, [
        FieldError("c.value", "must be omitted for not_exists"),
        FieldError("c.json_path", "must be omitted for not_exists")]),
    ({"condition": "contains", "value": 3}, [FieldError("c.value", "must be a string")]),
    ({"condition": "not_contains"}, [FieldError("c.value", "must be a string")]),
    ({"condition": "regex_match", "value": "(?<=a)b"},
     # Go 1.22+ reads (?< as a named capture (Go 1.19 said "invalid or unsupported Perl
     # syntax: `(?<`"); AgentClash ships Go 1.25.
     [FieldError("c.value", "must be a valid regex: error parsing regexp: invalid named "
                            "capture: `(?<=a)b`")]),
    ({"condition": "regex_match", "value": 3},
     [FieldError("c.value", "must be a string regex pattern")]),
    ({"condition": "equals"}, [FieldError("c.value", "is required")]),
    ({"condition": "equals", "value": False}, []),
    ({"condition": "json_path_match", "value": 1}, [FieldError("c.json_path", "is required")]),
    ({"condition": "json_path_match", "json_path": "$.a"}, [FieldError("c.value", "is required")]),
]


@pytest.mark.parametrize(("config", "errors"), RULES)
def test_config_rules(config: dict[str, Any], errors: list[FieldError]) -> None:
    """Load-time rules per condition."""
    assert KIND.config_rules is not None
    assert KIND.config_rules(PostconditionConfig.model_validate(config), P) == errors


def test_load_time_rules_through_validation() -> None:
    """validate_spec requires the config and applies the condition rules at config paths."""
    checks = [{"key": "out", "type": "file_capture", "path": "/workspace/out.json"}]
    missing = spec_with({"key": "p", "type": "postcondition", "target": "file:out"},
                        post_execution_checks=checks)
    wrong = spec_with({"key": "p", "type": "postcondition", "target": "file:out",
                       "config": {"condition": "exists", "value": "x"}},
                      post_execution_checks=checks)

    assert FieldError("evaluation_spec.validators[0].config",
                      "is required") in validate_spec(missing)
    assert FieldError("evaluation_spec.validators[0].config.value",
                      "must be omitted for exists") in validate_spec(wrong)


def test_kind_shape() -> None:
    """Strict config, file target, expected_from omitted, handles a missing target."""
    assert (KIND.strictness, KIND.expected, KIND.needs_file_target,
            KIND.handles_missing_target, KIND.config_required) == (
        "strict", "omitted", True, True, True)


@given(st.text(), st.sampled_from(["exists", "contains", "regex_match", "equals",
                                   "json_path_match", "bogus"]), st.text(), st.text())
def test_never_raises(content: str, condition: str, value: str, path: str) -> None:
    """Arbitrary files and configs give a result, never an exception."""
    config = {"condition": condition, "value": value, "json_path": path}
    assert run_post(config, content).state in {"available", "error"}
