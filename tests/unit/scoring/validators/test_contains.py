"""contains (docs/scoring.md §5.2): case-sensitive substring; an empty expected always passes."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from unit.scoring.helpers import run_one

CASES = [
    ("the answer is 42", "42", "pass"),
    ("the answer is 42", "answer is", "pass"),
    ("anything", "", "pass"),        # empty expected always passes
    ("", "", "pass"),
    ("", "x", "fail"),
    ("The Answer", "answer", "fail"),  # case-sensitive
    ("4 2", "42", "fail"),
    ("ﬁle", "file", "fail"),         # no normalization
]


@pytest.mark.parametrize(("actual", "expected", "verdict"), CASES)
def test_substring(actual: str, expected: str, verdict: str) -> None:
    """Pass iff expected occurs in actual, exactly as written."""
    result = run_one("contains", actual, expected)

    assert (verdict, 1.0 if verdict == "pass" else 0.0) == (result.verdict,
                                                            result.normalized_score)


def test_literal_keeps_leading_space_but_not_trailing() -> None:
    """``literal: x`` keeps its leading space; a trailing one is trimmed at load (§2.2)."""
    assert run_one("contains", "ax", " x").verdict == "fail"
    assert run_one("contains", "a x", "x ").verdict == "pass"


@given(st.text(), st.text())
def test_never_raises(actual: str, expected: str) -> None:
    """Arbitrary text decides pass/fail and never raises."""
    assert run_one("contains", actual, expected).verdict in {"pass", "fail"}
