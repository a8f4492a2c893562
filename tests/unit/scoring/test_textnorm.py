"""Whitespace handling in scoring.compat.textnorm: the fast paths agree with the plain rules."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from scoring.compat.textnorm import GO_WHITESPACE, collapse_ascii_whitespace, split_words


@given(st.text(alphabet="ab \t\n\r\f\v\x1c\u00a0", max_size=30))
def test_collapse_ascii_whitespace_is_one_space_per_run(text: str) -> None:
    """Every run of ASCII whitespace becomes one space, by the fast path or the regex."""
    assert collapse_ascii_whitespace(text) == re.sub(r"[\t\n\f\r ]+", " ", text)


@given(st.text(alphabet="ab \t\n\x1c\x1f\u00a0\u2003\u200b", max_size=30))
def test_split_words_splits_on_go_whitespace_only(text: str) -> None:
    """Go's strings.Fields: Python-only separators (\\x1c-\\x1f) stay inside words."""
    assert split_words(text) == [w for w in re.split("[" + GO_WHITESPACE + "]+", text) if w]
