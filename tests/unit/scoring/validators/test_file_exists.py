"""file_exists (docs/scoring.md §5.15): a missing file is a verdict, not missing evidence; lenient
config."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from unit.scoring.helpers import run_one
from unit.scoring.validators.grader_events import JSON_VALUES, captured, listed, spec_body

from evalfleet.scoring.spec.models import EvaluationSpec
from evalfleet.scoring.spec.rules import validate_spec

PRESENT = [captured("out", "hello")]
ABSENT = [captured("out", exists=False)]


@pytest.mark.parametrize(("events", "config", "verdict", "reason"), [
    (PRESENT, None, "pass", ""),
    (PRESENT, {"must_exist": True}, "pass", ""),
    (PRESENT, {"must_exist": False}, "fail", "file exists but should not"),
    ([captured("out", "")], None, "pass", ""),
    ([listed("out", "/workspace", [])], None, "pass", ""),
    (ABSENT, None, "fail", "file does not exist"),
    (ABSENT, {"must_exist": False}, "pass", "file correctly does not exist"),
    ([], None, "fail", "file does not exist"),
    ([], {"must_exist": False}, "pass", "file correctly does not exist"),
    ([captured("other", "x")], {"must_exist": False}, "pass", "file correctly does not exist"),
    (PRESENT, {"must_exist": None}, "pass", ""),
    (PRESENT, {"Must_Exist": False}, "fail", "file exists but should not"),
    (PRESENT, {"mustexist": False, "mode": "x"}, "pass", ""),
    (ABSENT, {"must_exist": "no"}, "fail", "file does not exist"),
    (ABSENT, ["must_exist"], "fail", "file does not exist"),
])
def test_existence(events: list[dict[str, Any]], config: Any, verdict: str, reason: str) -> None:
    """Pass iff existence matches must_exist; a missing file is always an available result."""
    result = run_one("file_exists", None, config=config, target="file:out", events=events)

    assert (result.state, result.verdict, result.reason) == ("available", verdict, reason)
    assert result.normalized_score == (1.0 if verdict == "pass" else 0.0)


@pytest.mark.parametrize(("config", "detail"), [
    ({"must_exist": "no"}, "cannot unmarshal string into Go struct field "
                           "fileExistsConfig.must_exist of type bool"),
    ({"must_exist": 0}, "cannot unmarshal number into Go struct field"),
    (["must_exist"], "cannot unmarshal array into Go value of type scoring.fileExistsConfig"),
    ("yes", "cannot unmarshal string into Go value"),
])
def test_bad_config_when_present(config: Any, detail: str) -> None:
    """With the file present, a malformed config is an error classed pack_error."""
    result = run_one("file_exists", None, config=config, target="file:out", events=PRESENT)

    assert (result.state, result.verdict, result.outcome_class) == ("error", "error", "pack_error")
    assert result.reason.startswith("invalid file_exists config: json: ")
    assert detail in result.reason


def test_reference_error_is_error() -> None:
    """A malformed target reference is an error, even for file_exists."""
    result = run_one("file_exists", None, target="file:  ", events=[])

    assert result.state == "error"


def test_config_never_validated_at_load() -> None:
    """Lenient configs are not checked at load time: a wrong type is not a finding."""
    spec = EvaluationSpec.model_validate(spec_body(
        {"key": "v", "type": "file_exists", "target": "file:out",
         "config": {"must_exist": "no", "bogus": 1}},
        post_execution_checks=[{"key": "out", "type": "file_capture", "path": "/w/out"}]))

    assert validate_spec(spec) == []


@given(config=JSON_VALUES, content=st.none() | st.text(), exists=st.booleans())
def test_never_raises(config: Any, content: str | None, exists: bool) -> None:
    """Arbitrary configs and captures give a result, never an exception."""
    result = run_one("file_exists", None, config=config, target="file:out",
                     events=[captured("out", content, exists=exists)])

    assert result.state in {"available", "error"}
