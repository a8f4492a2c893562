"""boolean_assert (docs/scoring.md §5.4): trimmed, lower-cased true|1|yes / false|0|no; pass iff
equal."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from unit.scoring.helpers import run_one

CASES = [
    ("true", "true", "pass"),
    (" YES ", "1", "pass"),
    ("No", "false", "pass"),
    ("0", "no", "pass"),
    ("\u00a0True\n", "yes", "pass"),
    ("true", "false", "fail"),
    ("1", "0", "fail"),
    ("yes", "no", "fail"),
]


@pytest.mark.parametrize(("actual", "expected", "verdict"), CASES)
def test_boolean_words(actual: str, expected: str, verdict: str) -> None:
    """The six words parse case-insensitively after a Unicode trim; pass iff equal."""
    result = run_one("boolean_assert", actual, expected)

    assert (verdict, 1.0 if verdict == "pass" else 0.0) == (result.verdict,
                                                            result.normalized_score)


@pytest.mark.parametrize(("actual", "expected", "outcome_class"), [
    ("maybe", "true", "evaluator_error"),
    ("", "true", "evaluator_error"),
    ("t", "true", "evaluator_error"),
    ("true", "nope", "pack_error"),
    ("true", "", "pack_error"),
    ("y", "n", "evaluator_error"),  # the actual side is parsed (and fails) first
])
def test_unparseable_sides_are_errors(actual: str, expected: str, outcome_class: str) -> None:
    """Anything else is an error: actual is parsed first (the agent's fault), then expected."""
    result = run_one("boolean_assert", actual, expected)

    assert ("error", outcome_class) == (result.state, result.outcome_class)


def test_config_is_ignored() -> None:
    """Config is never read, even with unknown keys."""
    result = run_one("boolean_assert", "yes", "true", {"anything": 1})

    assert result.verdict == "pass"


@given(st.text(), st.text())
def test_never_raises(actual: str, expected: str) -> None:
    """Arbitrary strings give a result, never an exception."""
    assert run_one("boolean_assert", actual, expected).state in {"available", "error"}
