"""Efficiency (clawdiators-scoring §6 ``api_call_efficiency``, §8 overlay), 0–1 scores."""

from __future__ import annotations


def token_efficiency(tokens: float, budget: int) -> float:
    """max(0, 1 − tokens/budget): the §8 overlay before weighting."""
    return max(0.0, 1.0 - tokens / budget)


def call_efficiency(calls: int, optimal: int, most: int) -> float:
    """1 at or under ``optimal``, 0 at or over ``most``, linear between (§6).

    With ``optimal`` 0 this is the §8 overlay's 1 − calls/maxLlmCalls.
    """
    if calls <= optimal:
        return 1.0
    if calls >= most:
        return 0.0
    return 1.0 - (calls - optimal) / (most - optimal)
