"""ROUGE-L's LCS (rapidfuzz LCSseq on numbered tokens) equals the textbook dynamic program."""

from __future__ import annotations

import time

from hypothesis import given, settings
from hypothesis import strategies as st

from evalfleet.scoring.compat.generation import lcs_length


def reference_lcs(a: list[str], b: list[str]) -> int:
    """The quadratic DP AgentClash's longestCommonSubsequence runs."""
    previous = [0] * (len(b) + 1)
    for token in a:
        current = [0] * (len(b) + 1)
        for j, other in enumerate(b, start=1):
            current[j] = previous[j - 1] + 1 if token == other else max(previous[j], current[j - 1])
        previous = current
    return previous[-1]


TOKENS = st.lists(st.sampled_from(["a", "b", "c", "the", "The", "", "é", "e\u0301", "1"]),
                  max_size=80)


@settings(max_examples=500)
@given(a=TOKENS, b=TOKENS)
def test_lcs_matches_the_dynamic_program(a: list[str], b: list[str]) -> None:
    """Any two token lists (near-equal tokens included) give the DP's length."""
    assert lcs_length(a, b) == reference_lcs(a, b)


def test_long_inputs_cross_the_bit_parallel_word_size() -> None:
    """Sequences longer than 64 tokens (several machine words) are exact too."""
    a = [str(i % 7) for i in range(300)]
    b = [str(i % 5) for i in range(250)]
    assert lcs_length(a, b) == reference_lcs(a, b)


def test_five_thousand_tokens_in_well_under_a_second() -> None:
    """The quadratic pure-Python LCS took 3.4 s at 5,000 tokens; the C one must not."""
    a = [f"w{i % 97}" for i in range(5000)]
    b = [f"w{i % 89}" for i in range(5000)]
    started = time.perf_counter()
    lcs_length(a, b)
    assert time.perf_counter() - started < 0.5
