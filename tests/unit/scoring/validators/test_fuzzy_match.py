"""fuzzy_match (docs/scoring.md §5.7): Levenshtein similarity (substitution cost 1) against a
threshold."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from unit.scoring.helpers import run_one

from evalfleet.scoring.errors import FieldError
from evalfleet.scoring.spec.models import EvaluationSpec
from evalfleet.scoring.spec.rules import validate_spec
from evalfleet.scoring.validators import fuzzy_match

PATH = "evaluation_spec.validators[0].config"


@pytest.mark.parametrize(("actual", "expected", "config", "score", "verdict"), [
    ("abc", "xyz", {"threshold": 0.5}, 0.5, "pass"),
    ("abc", "xyz", None, 0.5, "fail"),
    ("", "", None, 1.0, "pass"),
    ("kitten", "sitting", None, 10 / 13, "fail"),
    ("Hello", "hello", None, 0.9, "pass"),
    ("Hello", "hello", {"case_insensitive": True}, 1.0, "pass"),
    ("STRASSE", "straße", {"case_insensitive": True}, 1.0, "pass"),
    ("  a \t\n b ", "a b", {"normalize": True}, 1.0, "pass"),
    ("a\u00a0b", "a b", {"normalize": True}, 5 / 6, "pass"),
    ("abc", "", None, 0.0, "fail"),
    ("abc", "abd", {"threshold": 5}, 5 / 6, "fail"),
    ("abc", "xyz", {"threshold": -1}, 0.5, "pass"),
    ("\U0001f600x", "x", None, 2 / 3, "fail"),
])
def test_similarity(actual: str, expected: str, config: Any, score: float, verdict: str) -> None:
    """(|a|+|b|−lev)/(|a|+|b|) over code points; normalize then fold; clamped threshold."""
    result = run_one("fuzzy_match", actual, expected, config)

    assert (pytest.approx(score), verdict) == (result.normalized_score, result.verdict)


def test_graded_score_kept_on_fail() -> None:
    """A failing fuzzy match keeps its continuous score and names the threshold."""
    result = run_one("fuzzy_match", "abcd", "abxy", {"threshold": 0.9})

    assert (result.normalized_score, result.verdict) == (0.75, "fail")
    assert result.reason == "similarity 0.7500 is below threshold 0.9000"


@pytest.mark.parametrize("size", [100_001, 200_000])
def test_oversized_input_is_error(size: int) -> None:
    """Either side over 100,000 code points is an error, not a score."""
    result = run_one("fuzzy_match", "a" * size, "a")

    assert (result.state, result.normalized_score) == ("error", None)


@pytest.mark.parametrize(("config", "errors"), [
    ({"threshold": 0.5}, []),
    ({"threshold": 1.5}, [FieldError(f"{PATH}.threshold", "must be between 0 and 1")]),
    ({"threshold": -0.1}, [FieldError(f"{PATH}.threshold", "must be between 0 and 1")]),
])
def test_config_rules(config: dict[str, Any], errors: list[FieldError]) -> None:
    """Load time: threshold must lie in [0, 1]."""
    model, problem = fuzzy_match.KIND.decode_config(config)

    assert (None, errors) == (problem, fuzzy_match.config_rules(model, PATH))


@pytest.mark.parametrize(("config", "message"), [
    ({"threshold": 0.9, "bogus": True}, 'invalid JSON: json: unknown field "bogus"'),
    ({"threshold": "high"}, "invalid JSON"),
    ({"threshold": 2}, "must be between 0 and 1"),
])
def test_validate_spec(config: dict[str, Any], message: str) -> None:
    """Through validate_spec: unknown keys, wrong types and ranges are found at load time."""
    spec = EvaluationSpec.model_validate({
        "name": "s", "version_number": 1, "judge_mode": "deterministic",
        "validators": [{"key": "v", "type": "fuzzy_match", "target": "final_output",
                        "expected_from": "literal:x", "config": config}],
        "scorecard": {"dimensions": ["correctness"]}})

    assert any(message in str(f) for f in validate_spec(spec))


def test_unknown_key_at_run_time_is_pack_error() -> None:
    """A strict config with an unknown key is an error result at run time too."""
    result = run_one("fuzzy_match", "a", "a", {"treshold": 0.5})

    assert (result.state, result.outcome_class) == ("error", "pack_error")


def test_null_and_case_insensitive_keys() -> None:
    """As Go's decoder: null leaves the default, keys match fields case-insensitively."""
    result = run_one("fuzzy_match", "abc", "xyz", {"Threshold": 0.5, "normalize": None})

    assert result.verdict == "pass"


@given(st.text(), st.text(), st.floats(allow_nan=False), st.booleans(), st.booleans())
def test_never_raises(actual: str, expected: str, threshold: float, fold: bool,
                      normalize: bool) -> None:
    """Arbitrary strings and configs give a result in [0, 1], never an exception."""
    config = {"threshold": threshold, "case_insensitive": fold, "normalize": normalize}
    result = run_one("fuzzy_match", actual, expected, config)

    assert result.normalized_score is None or 0 <= result.normalized_score <= 1
