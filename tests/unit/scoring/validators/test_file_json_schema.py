"""file_json_schema (docs/scoring.md §5.17): json_schema on a captured file, schema from a lenient
config."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from unit.scoring.helpers import T0, completed, run_one

from evalfleet.scoring.run.records import ValidatorResult
from evalfleet.scoring.validators import lookup

OBJECT_WITH_ID = {"type": "object", "required": ["id"],
                  "properties": {"id": {"type": "integer"}}}


def captured(content: str | None, exists: bool = True) -> list[dict[str, Any]]:
    """Run events with one capture of key ``out``."""
    payload: dict[str, Any] = {"key": "out", "path": "/workspace/out.json", "exists": exists}
    if content is not None:
        payload["content"] = content
    return [completed("done"), {"type": "grader.verification.file_captured",
                                "occurred_at": T0, "payload": payload}]


def run_file(content: str | None, config: Any, exists: bool = True) -> ValidatorResult:
    """Run file_json_schema on file ``out``."""
    return run_one("file_json_schema", None, None, config, target="file:out",
                   events=captured(content, exists))


@pytest.mark.parametrize(("content", "config", "verdict"), [
    ('{"id": 3}', {"schema": OBJECT_WITH_ID}, "pass"),
    ('{"id": 3.0}', {"schema": OBJECT_WITH_ID}, "pass"),
    ('{"id": "3"}', {"schema": OBJECT_WITH_ID}, "fail"),
    ("{}", {"schema": OBJECT_WITH_ID}, "fail"),
    ('{"id": 1}', {"schema": OBJECT_WITH_ID, "mode": "strict", "extra": 1}, "pass"),
    ("[]", {"schema": True}, "pass"),
    ('{"id": "x"}', {"Schema": OBJECT_WITH_ID}, "fail"),
    ('{"x": 1}', {"schema": {"$schema": "http://json-schema.org/draft-07/schema#",
                             "required": ["x"]}}, "pass"),
    ("\n\t[1]\n", {"schema": {"type": "array"}}, "pass"),
])
def test_file_validated_against_config_schema(content: str, config: Any, verdict: str) -> None:
    """The captured content is the document; unknown config keys are ignored."""
    result = run_file(content, config)

    assert (verdict, 1.0 if verdict == "pass" else 0.0) == (result.verdict,
                                                            result.normalized_score)


@pytest.mark.parametrize(("config", "reason"), [
    (None, "file_json_schema config is required"),
    ({}, "file_json_schema config.schema is required"),
    ({"schema": {"$schema": "https://example.com/other"}}, "unsupported JSON schema draft"),
    ("not an object", "invalid file_json_schema config: json: cannot unmarshal string"),
])
def test_config_problems_are_run_time_pack_errors(config: Any, reason: str) -> None:
    """A missing config or schema is an error at run time, classed pack_error."""
    result = run_file("{}", config)

    assert (result.state, result.outcome_class) == ("error", "pack_error")
    assert reason in result.reason


@pytest.mark.parametrize("config", [{"schema": None}, {"SCHEMA": None}])
def test_null_schema_is_the_false_schema(config: Any) -> None:
    """``schema: null`` is present (Go keys match case-insensitively) and, as jsonschema-go
    decodes null like the boolean false, validates nothing: the file fails."""
    result = run_file("{}", config)

    assert (result.state, result.verdict, result.reason) == (
        "available", "fail", "json schema validation failed")


def test_config_not_checked_at_load_time() -> None:
    """The config is lenient: no load-time rules, not required at load time."""
    kind = lookup("file_json_schema")

    assert kind is not None
    assert (kind.strictness, kind.config_required, kind.config_rules) == ("lenient", False, None)


def test_malformed_file_is_agent_error() -> None:
    """A file that is not one JSON value is an evaluator_error."""
    result = run_file("{oops", {"schema": {}})

    assert (result.state, result.outcome_class) == ("error", "evaluator_error")


@pytest.mark.parametrize(("events", "reason"), [
    (captured(None, exists=False), 'captured file "out" does not exist'),
    ([completed("done")], 'file capture key "out" is unavailable'),
])
def test_missing_file_is_unavailable(events: list[dict[str, Any]], reason: str) -> None:
    """No file means no evidence: unavailable with the resolution's reason."""
    result = run_one("file_json_schema", None, None, {"schema": {}}, target="file:out",
                     events=events)

    assert result.state == "unavailable"
    assert result.reason.startswith(reason)


@given(st.text(), st.dictionaries(st.text(max_size=5), st.text(max_size=5), max_size=3))
def test_never_raises(content: str, schema: dict[str, str]) -> None:
    """Arbitrary files and schemas give a result, never an exception."""
    assert run_file(content, {"schema": schema}).state in {"available", "error"}
