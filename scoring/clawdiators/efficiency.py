"""Efficiency (docs/scoring.md §C3), 0–1 scores."""

from __future__ import annotations


def token_efficiency(tokens: float, budget: int) -> float:
    """max(0, 1 − tokens/budget), before weighting."""
    return max(0.0, 1.0 - tokens / budget)


def call_efficiency(calls: int, optimal: int, most: int) -> float:
    """1 at or under ``optimal``, 0 at or over ``most``, linear between (§C3).

    With ``optimal`` 0 this is 1 − calls/max.
    """
    if calls <= optimal:
        return 1.0
    if calls >= most:
        return 0.0
    return 1.0 - (calls - optimal) / (most - optimal)
