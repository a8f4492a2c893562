"""Whitespace handling in scoring.compat.textnorm: the fast paths agree with the plain rules."""

from __future__ import annotations

import re
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalfleet.scoring.compat.textnorm import (
    GO_WHITESPACE,
    collapse_ascii_whitespace,
    normalize_unicode,
    split_words,
)


@given(st.text(alphabet="ab \t\n\r\f\v\x1c\u00a0", max_size=30))
def test_collapse_ascii_whitespace_is_one_space_per_run(text: str) -> None:
    """Every run of ASCII whitespace becomes one space, by the fast path or the regex."""
    assert collapse_ascii_whitespace(text) == re.sub(r"[\t\n\f\r ]+", " ", text)


@given(st.text(alphabet="ab \t\n\x1c\x1f\u00a0\u2003\u200b", max_size=30))
def test_split_words_splits_on_go_whitespace_only(text: str) -> None:
    """Go's strings.Fields: Python-only separators (\\x1c-\\x1f) stay inside words."""
    assert split_words(text) == [w for w in re.split("[" + GO_WHITESPACE + "]+", text) if w]


#: Starters that compose, Hangul jamo and syllables, compatibility forms, iota subscript.
COMPOSING = "aAeoU\u1100\u1161\u11a8\uac00ﬁ①ｶﾞ\u0345\u0399"


@settings(max_examples=3000)
@given(st.text(alphabet=st.one_of(st.characters(categories=("Mn", "Mc", "Me")),
                                  st.sampled_from(COMPOSING), st.characters()), max_size=40))
def test_nfkc_is_pythons_own(text: str) -> None:
    assert normalize_unicode(text) == unicodedata.normalize("NFKC", text)


@pytest.mark.timeout(60)
def test_nfkc_of_a_long_run_of_marks_in_reverse_order() -> None:
    """Half a million marks each way round (CPython's own ordering is an insertion sort:
    about half an hour at 2 MiB); well under a second here."""
    text = "a" + "\u0300" * 500_000 + "\u0316" * 500_000
    assert normalize_unicode(text) == "\u00e0" + "\u0316" * 500_000 + "\u0300" * 499_999
