"""Text normalization steps shared by the text validators (docs/scoring.md §5.7–§5.14, §17).

AgentClash is written in Go, so two different ideas of "whitespace" apply:

* **Unicode whitespace** (Go ``unicode.IsSpace``, the Unicode ``White_Space`` property) for
  trimming, token splitting and chrF's character filter. Python's ``str.isspace`` adds the
  four information separators U+001C–U+001F; they are *not* whitespace here.
* **ASCII whitespace** ``[\\t\\n\\f\\r ]`` (RE2's ``\\s``) for "collapse": ``\\v`` and NBSP
  are left alone.

Case folding is full Unicode folding (``str.casefold``: ß → ss). Every step is a plain
function of one string; :data:`STEPS` is the explicit table of normalized_match's
pipeline steps.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from typing import Final

from .goquote import quote

GO_WHITESPACE: Final = (
    "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
"""The Unicode White_Space code points (Go ``unicode.IsSpace``)."""
_PYTHON_ONLY_SPACE: Final = frozenset("\x1c\x1d\x1e\x1f")
# Internal fixed patterns (not pack/candidate input): Python ``re`` with ASCII classes,
# which agrees with RE2 on these literal alternations and ASCII-only classes.
_ASCII_SPACE_RUN: Final = re.compile(r"[\t\n\f\r ]{2,}|[\t\n\f\r]")
"""Runs to collapse: a lone space is left alone (it is already the result), which keeps
ordinary text from being rewritten space by space."""
_GO_SPACE_RUN: Final = re.compile("[" + GO_WHITESPACE + "]+")
_ARTICLES: Final = re.compile(r"\b(?:a|an|the)\b", re.ASCII)
_CURRENCY: Final = re.compile("\\$|€|£|¥|₹|USD|EUR|GBP|JPY|INR")
_FORMATTING: Final = str.maketrans("", "", ",()[]")

DEFAULT_PIPELINE: Final = ("trim", "lowercase", "collapse_whitespace")


class UnknownStep(ValueError):
    """A normalization step name that is not in :data:`STEPS`."""


def trim(text: str) -> str:
    """Strip Unicode whitespace at both ends (Go ``strings.TrimSpace``)."""
    return text.strip(GO_WHITESPACE)


def split_words(text: str) -> list[str]:
    """Split on runs of Unicode whitespace, dropping empties (Go ``strings.Fields``)."""
    if not any(char in text for char in _PYTHON_ONLY_SPACE):
        return text.split()
    return [word for word in _GO_SPACE_RUN.split(text) if word]


def casefold(text: str) -> str:
    """Full Unicode case folding."""
    return text.casefold()


def collapse_ascii_whitespace(text: str) -> str:
    """Replace each run of ASCII whitespace ``[\\t\\n\\f\\r ]`` with one space (no trim)."""
    if "  " not in text and not any(char in text for char in "\t\n\f\r"):
        return text  # nothing to collapse: skip the regex scan of a long text
    return _ASCII_SPACE_RUN.sub(" ", text)


@functools.lru_cache(maxsize=8192)
def _is_punct_or_symbol(char: str) -> bool:
    return unicodedata.category(char)[0] in "PS"


def strip_punctuation(text: str) -> str:
    """Delete every code point in Unicode categories P* and S* (``$``, ``+``, ``'`` too)."""
    return "".join(char for char in text if not _is_punct_or_symbol(char))


def strip_currency(text: str) -> str:
    """Delete ``$ € £ ¥ ₹ USD EUR GBP JPY INR`` in one left-to-right pass (case-sensitive)."""
    return _CURRENCY.sub("", text)


def strip_formatting(text: str) -> str:
    """Delete ``, ( ) [ ]``."""
    return text.translate(_FORMATTING)


def normalize_unicode(text: str) -> str:
    """Unicode NFKC normalization, as ``unicodedata.normalize("NFKC", text)`` gives it, in
    linear time. CPython puts combining marks in canonical order by insertion sort:
    quadratic on a long run of them (a 2 MiB answer of marks in reverse order took half an
    hour; found by a red-team pass). So each character is decomposed here, each run of
    marks sorted (stably, by combining class, as canonical ordering is), and CPython only
    composes what is already in order. Text already in NFKC, as most is, is returned as it
    is: CPython's check stops at the first mark out of order, and is linear."""
    if text.isascii() or unicodedata.is_normalized("NFKC", text):  # linear, in C
        return text
    ordered: list[str] = []
    marks: list[str] = []
    for decomposed in map(_nfkd, text):
        for char in decomposed:
            if unicodedata.combining(char):
                marks.append(char)
                continue
            if marks:
                ordered += sorted(marks, key=unicodedata.combining)
                marks.clear()
            ordered.append(char)
    ordered += sorted(marks, key=unicodedata.combining)
    return unicodedata.normalize("NFKC", "".join(ordered))


@functools.lru_cache(maxsize=65536)
def _nfkd(char: str) -> str:
    return unicodedata.normalize("NFKD", char)


def remove_articles(text: str) -> str:
    """Replace whole-word lowercase ``a``/``an``/``the`` (ASCII word boundary) with a space."""
    return _ARTICLES.sub(" ", text)


def sort_words(text: str) -> str:
    """Split on Unicode whitespace, sort by code point, join with one space."""
    return " ".join(sorted(split_words(text)))


def sort_lines(text: str) -> str:
    """CRLF → LF, split on LF, sort by code point, join with LF (empty lines kept)."""
    return "\n".join(sorted(text.replace("\r\n", "\n").split("\n")))


STEPS: Final[dict[str, Callable[[str], str]]] = {
    "trim": trim,
    "lowercase": casefold,
    "collapse_whitespace": collapse_ascii_whitespace,
    "strip_punctuation": strip_punctuation,
    "strip_currency": strip_currency,
    "strip_formatting": strip_formatting,
    "normalize_unicode": normalize_unicode,
    "remove_articles": remove_articles,
    "sort_words": sort_words,
    "sort_lines": sort_lines,
}


def unknown_steps(steps: Iterable[str]) -> list[tuple[int, str]]:
    """The (index, name) of every step that is not in :data:`STEPS`."""
    return [(i, step) for i, step in enumerate(steps) if step not in STEPS]


def apply_pipeline(text: str, steps: Sequence[str]) -> str:
    """Apply the named steps in order.

    Raises:
        UnknownStep: at the first step name that is not in :data:`STEPS`.
    """
    for step in steps:
        function = STEPS.get(step)
        if function is None:
            raise UnknownStep(f"unknown normalization step {go_quote(step)}")
        text = function(text)
    return text


def prepare(text: str, *, normalize: bool, case_insensitive: bool) -> str:
    """The fuzzy/generation text prep: trim + collapse if ``normalize``, then case fold."""
    if normalize:
        text = collapse_ascii_whitespace(trim(text))
    if case_insensitive:
        text = casefold(text)
    return text


def go_quote(text: str) -> str:
    """Go's ``%q`` of a string (``strconv.Quote``), for messages."""
    return quote(text)
