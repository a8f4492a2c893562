"""RE2 patterns: Go semantics and robustness against text Python allows but Go cannot hold."""

from __future__ import annotations

import pytest

from scoring.patterns import PatternError, search


@pytest.mark.parametrize(("pattern", "text", "expected"), [
    (r"\d", "٣", False),          # RE2 \d is ASCII only
    (r"a$", "a\n", False),         # $ is end of text without (?m)
    (r"(?m)a$", "a\nb", True),
    (r"\bword\b", "a word here", True),
    ("\ud800", "x\ud800y", True),  # lone surrogates become U+FFFD on both sides, as in Go
    ("a", "b\udfff", False),
])
def test_search_follows_re2(pattern: str, text: str, expected: bool) -> None:
    """Unanchored RE2 search with Go's character and anchor semantics."""
    assert expected == search(pattern, text)


@pytest.mark.parametrize("pattern", [r"(a)\1", r"(?=a)", r"(?<=a)b", "("])
def test_perl_only_syntax_is_a_pattern_error(pattern: str) -> None:
    """Backreferences, lookarounds and broken syntax are pattern errors (pack errors)."""
    with pytest.raises(PatternError):
        search(pattern, "aa")
