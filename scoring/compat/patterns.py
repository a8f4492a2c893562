"""RE2 regular expressions, as Go's ``regexp`` compiles them.

Python's ``re`` differs from RE2 in ways that change verdicts (Unicode ``\\d``/``\\s``/``\\b``,
``$`` before a trailing newline, backreferences and lookarounds): every pattern a pack or
a candidate supplies goes through here.
"""

from __future__ import annotations

import functools
import re
from typing import Any

import re2

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False


_SURROGATE = re.compile("[\ud800-\udfff]")


def valid_text(text: str) -> str:
    """``text`` with lone surrogates (from JSON ``\\ud800`` escapes) as U+FFFD, as Go has it."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text)
    return text


class PatternError(ValueError):
    """The pattern is not valid Go ``regexp`` syntax; the message is Go's
    (``error parsing regexp: missing closing ): `(a```)."""


_GO_CODES = {
    "invalid escape sequence": "invalid escape sequence",
    "invalid character class": "invalid character class",
    "invalid character class range": "invalid character class range",
    "missing ]": "missing closing ]",
    "missing )": "missing closing )",
    "unexpected )": "unexpected )",
    "trailing \\": "trailing backslash at end of expression",
    "no argument for repetition operator": "missing argument to repetition operator",
    "invalid repetition size": "invalid repeat count",
    "bad repetition operator": "invalid nested repetition operator",
    "invalid perl operator": "invalid or unsupported Perl syntax",
    "invalid UTF-8": "invalid UTF-8",
    "invalid named capture group": "invalid named capture",
    "pattern too large - compile failed": "expression too large",
}
"""RE2's error codes (C++) → Go ``regexp/syntax``'s ``ErrorCode`` texts."""
_PERL_FLAGS = "imsU"


@functools.lru_cache(maxsize=1024)
def compile_pattern(pattern: str) -> Any:
    """Compile ``pattern`` with RE2, accepting exactly what Go's ``regexp.Compile`` does.

    RE2 and Go's ``regexp/syntax`` share a grammar; Go alone rejects ``\\C`` (any byte),
    and the two word their errors differently: the error is given in Go's words, as the
    Go release AgentClash ships (1.25) words it (``(?<name>`` captures are accepted, so a
    lookbehind is an ``invalid named capture``).

    Raises:
        PatternError: when the pattern does not compile.
    """
    text = valid_text(pattern)
    any_byte = _any_byte_escape(text)
    if any_byte is not None:
        _compile(text[:any_byte], truncated=True)
        raise PatternError(_go_error("invalid escape sequence", "\\C"))
    return _compile(text)


def _compile(text: str, *, truncated: bool = False) -> Any:
    try:
        return re2.compile(text, _OPTIONS)
    except re2.error as err:
        detail = err.args[0] if err.args else "invalid pattern"
        message = detail.decode("utf-8", "replace") if isinstance(detail, bytes) else str(detail)
        code, _, arg = message.partition(": ")
        if truncated and code in ("missing )", "missing ]", "trailing \\"):
            return None  # an artifact of cutting the pattern short
        if code == "invalid perl operator" and arg[:4] in ("(?<=", "(?<!"):
            raise PatternError(_lookbehind(text, arg)) from None
        if code == "invalid perl operator":
            arg = _perl_operator(arg)
        raise PatternError(_go_error(_GO_CODES.get(code, code), arg)) from None


def _lookbehind(text: str, opener: str) -> str:
    """Go (1.22+) reads ``(?<`` as a named capture, so a lookbehind is a bad capture name.

    Go cites the capture up to the first ``>`` after the group's start, or the rest of
    the pattern when there is none. The group is the first ``opener`` that RE2 would
    parse as one: cutting the pattern there leaves a prefix that compiles, or lacks only
    a ``)`` (one inside a class lacks a ``]``; an escaped one ends in ``\\``).
    """
    start = text.find(opener)
    while start > 0 and not _group_can_start(text[:start]):
        start = text.find(opener, start + 1)
    rest = text[max(start, 0):]
    end = rest.find(">")
    return _go_error("invalid named capture", rest if end < 0 else rest[:end + 1])


def _group_can_start(prefix: str) -> bool:
    try:
        re2.compile(prefix, _OPTIONS)
    except re2.error as err:
        detail = err.args[0] if err.args else b""
        message = detail.decode("utf-8", "replace") if isinstance(detail, bytes) else str(detail)
        return message.startswith("missing )")
    return True


def _go_error(code: str, arg: str) -> str:
    return f"error parsing regexp: {code}: `{arg}`"


def _perl_operator(arg: str) -> str:
    """Go's ``parsePerlFlags`` cites the group up to the first character it rejects."""
    sign_seen = False
    for index, char in enumerate(arg[2:], start=2):
        if char in _PERL_FLAGS:
            continue
        if char == "-" and not sign_seen:
            sign_seen = True
            continue
        return arg[:index + 1]
    return arg


def _any_byte_escape(text: str) -> int | None:
    """Where the first ``\\C`` escape starts (outside ``\\Q...\\E``), or None."""
    index = 0
    while index < len(text) - 1:
        if text[index] != "\\":
            index += 1
            continue
        escaped = text[index + 1]
        if escaped == "C":
            return index
        if escaped == "Q":
            end = text.find("\\E", index + 2)
            index = len(text) if end < 0 else end + 2
            continue
        index += 2
    return None


def search(pattern: str, text: str) -> bool:
    """Unanchored RE2 search of ``pattern`` in ``text``.

    Raises:
        PatternError: when the pattern does not compile.
    """
    return compile_pattern(pattern).search(valid_text(text)) is not None
