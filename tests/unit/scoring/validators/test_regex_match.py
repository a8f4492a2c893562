"""regex_match (docs/scoring.md §5.3): the expected text is an RE2 pattern, searched (unanchored)
in actual."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from unit.scoring.helpers import run_one

CASES = [
    ("order 991 refunded", r"\d{3}", "pass"),
    ("abc", "b", "pass"),                  # unanchored search
    ("abc", "^b", "fail"),
    ("x٣y", r"\d", "fail"),                 # RE2 \d is ASCII only
    ("line\n", "line$", "fail"),            # $ is end of text without (?m)
    ("one\ntwo", "(?m)^two$", "pass"),
    ("HELLO", "(?i)hello", "pass"),
    ("a\nb", "a.b", "fail"),
    ("a\nb", "(?s)a.b", "pass"),
]


@pytest.mark.parametrize(("actual", "pattern", "verdict"), CASES)
def test_re2_search(actual: str, pattern: str, verdict: str) -> None:
    """Go RE2 semantics: ASCII classes, end-of-text ``$``, inline flags only."""
    result = run_one("regex_match", actual, pattern)

    assert (verdict, 1.0 if verdict == "pass" else 0.0) == (result.verdict,
                                                            result.normalized_score)


@pytest.mark.parametrize("pattern", [r"(a)\1", r"a(?=b)", r"(?<!a)b", "(", "[z-a]"])
def test_invalid_pattern_is_a_pack_error(pattern: str) -> None:
    """Backreferences, lookarounds and syntax errors are the pack author's mistake."""
    result = run_one("regex_match", "ab", pattern)

    assert (result.state, result.verdict, result.outcome_class) == ("error", "error",
                                                                    "pack_error")
    assert result.reason.startswith("invalid regex pattern: ")


@given(st.text(), st.text())
def test_never_raises(actual: str, pattern: str) -> None:
    """Arbitrary text and patterns end as pass, fail or a pack error, never an exception."""
    assert run_one("regex_match", actual, pattern).verdict in {"pass", "fail", "error"}
