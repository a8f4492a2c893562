"""Speed (docs/scoring.md §C2): three formulas, the seed's documented one by default.

Each returns a 0–1 score (the scorecard shows it × 1000):

* ``linear`` (A, ``time_decay``, the default): 1 − used/limit, clamped to [0, 1];
  1 when used ≤ 0, 0 when used ≥ limit. 90 % of the limit ⇒ 100 points.
* ``legacy_linear`` (B, the hand-written scorers): 0 when used ≥ limit, else
  round(1000 × (1 − used/limit)) points (no clamp for negative ``used``, as in the seed).
* ``power`` (C, ``computeSpeedScore``): round(1000 × (1 − used/limit)^1.5) points;
  1000 at used ≤ 0, 0 at used ≥ limit.
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import ROUND_HALF_UP, Decimal


def linear(used: float, limit: float) -> float:
    """Formula A: ``time_decay`` (the check order makes (0, 0) give 1)."""
    if used <= 0:
        return 1.0
    if used >= limit:
        return 0.0
    return 1.0 - used / limit


def legacy_linear(used: float, limit: float) -> float:
    """Formula B: whole points of 1000 × (1 − used/limit); 0 from the limit on."""
    if used >= limit:
        return 0.0
    return _points(1000 * (1 - used / limit)) / 1000


def power(used: float, limit: float) -> float:
    """Formula C: whole points of 1000 × (1 − used/limit)^1.5."""
    if used <= 0:
        return 1.0
    if used >= limit:
        return 0.0
    return _points(1000 * (1 - used / limit) ** 1.5) / 1000


def _points(raw: float) -> int:
    """JS ``Math.round`` for the values speed produces (halves up)."""
    return int(Decimal(repr(raw)).quantize(Decimal(1), rounding=ROUND_HALF_UP))


FORMULAS: dict[str, Callable[[float, float], float]] = {
    "linear": linear,
    "legacy_linear": legacy_linear,
    "power": power,
}
