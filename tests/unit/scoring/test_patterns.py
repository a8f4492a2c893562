"""RE2 patterns: Go semantics and robustness against text Python allows but Go cannot hold."""

from __future__ import annotations

import pytest

from evalfleet.scoring.compat.patterns import PatternError, search


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


GO_ERRORS = {  # regexp.Compile(pattern).Error(), recorded from Go 1.19's regexp/syntax
    "(a": "missing closing ): `(a`",
    "a)": "unexpected ): `a)`",
    "[z-a]": "invalid character class range: `z-a`",
    "(a)\\1": "invalid escape sequence: `\\1`",
    "a**": "invalid nested repetition operator: `**`",
    "a{1001}": "invalid repeat count: `{1001}`",
    "a{2,1}": "invalid repeat count: `{2,1}`",
    "x\\": "trailing backslash at end of expression: ``",
    "[[:foo:]]": "invalid character class range: `[:foo:]`",
    "\\pX": "invalid character class range: `\\pX`",
    "a(?=b)": "invalid or unsupported Perl syntax: `(?=`",
    "(?i": "invalid or unsupported Perl syntax: `(?i`",
    "(?z)": "invalid or unsupported Perl syntax: `(?z`",
    "(?P=n)": "invalid or unsupported Perl syntax: `(?P`",
    "(?P<>a)": "invalid named capture: `(?P<>`",
    "\\C": "invalid escape sequence: `\\C`",
    "\\8": "invalid escape sequence: `\\8`",
    "x{2}{3}": "invalid nested repetition operator: `{2}{3}`",
    "[a": "missing closing ]: `[a`",
    # Go 1.22+ (AgentClash ships 1.25) parses "(?<" as a named capture; 1.19 said
    # "invalid or unsupported Perl syntax: `(?<`". Go cites up to the first ">" or the end.
    "(?<=a)b": "invalid named capture: `(?<=a)b`",
    "(?<!a)b>c": "invalid named capture: `(?<!a)b>`",
    "x[(?<=]a(?<=q)z": "invalid named capture: `(?<=q)z`",
}


@pytest.mark.parametrize(("pattern", "message"), GO_ERRORS.items())
def test_errors_are_worded_as_go_words_them(pattern: str, message: str) -> None:
    """A pattern error carries Go's ``error parsing regexp: <code>: `<arg>``` text."""
    with pytest.raises(PatternError) as raised:
        search(pattern, "")
    assert str(raised.value) == f"error parsing regexp: {message}"


@pytest.mark.parametrize("pattern", ["(?<n>a)", "(?<1n>a)", "(?P<n>a)(?P<n>b)"])
def test_named_captures_compile_as_in_go_1_22(pattern: str) -> None:
    """``(?<name>…)`` (Go 1.22+) and repeated names compile."""
    assert search(pattern, "ab")
