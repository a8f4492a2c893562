"""From sample scores to one judge score (docs/scoring.md §14).

Per model: the median of its successful samples (numeric modes) or a majority (assertion:
pass when passes × 2 ≥ n, ties pass). Across models: the consensus aggregation, by default
mean (numeric) or majority_vote (assertion). Variance is the population variance of every
successful sample; confidence is a label derived from the per-model spread.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from typing import Final

from ..spec.models import JudgeDecl

DEFAULT_AGREEMENT: Final = 0.25


def per_model(mode: str, scores: Sequence[float]) -> float | None:
    """One model's score from its successful samples (None when it has none)."""
    if not scores:
        return None
    if mode == "assertion":
        return _majority(scores)
    return statistics.median(scores)


def _majority(scores: Sequence[float]) -> float:
    passes = sum(1 for s in scores if s >= 0.5)
    return 1.0 if passes * 2 >= len(scores) else 0.0


def _unanimous(scores: Sequence[float]) -> float:
    return 1.0 if all(s >= 0.5 for s in scores) else 0.0


def _mean(scores: Sequence[float]) -> float:
    return sum(scores) / len(scores)


AGGREGATIONS: Final[dict[str, Callable[[Sequence[float]], float]]] = {
    "median": statistics.median,
    "mean": _mean,
    "majority_vote": _majority,
    "unanimous": _unanimous,
}


def aggregation_of(judge: JudgeDecl) -> str:
    """The cross-model aggregation: the consensus block's, else the mode's default."""
    if judge.consensus is not None and judge.consensus.aggregation:
        return judge.consensus.aggregation
    return "majority_vote" if judge.mode == "assertion" else "mean"


def across_models(judge: JudgeDecl, model_scores: Sequence[float]) -> float:
    """The judge's score from its per-model scores (one model: that model's score)."""
    if len(model_scores) == 1:
        return model_scores[0]
    return AGGREGATIONS.get(aggregation_of(judge), _mean)(model_scores)


def variance(scores: Sequence[float]) -> float | None:
    """Population variance of every successful sample (None below two samples)."""
    if len(scores) < 2:
        return None
    average = _mean(scores)
    return sum((s - average) ** 2 for s in scores) / len(scores)


def confidence(judge: JudgeDecl, model_scores: Sequence[float], had_warnings: bool) -> str:
    """single-model / low / high / medium, as AgentClash labels agreement."""
    if not model_scores:
        return ""
    if len(model_scores) == 1:
        return "low" if had_warnings else "single-model"
    spread = max(model_scores) - min(model_scores)
    threshold = DEFAULT_AGREEMENT
    if judge.consensus and (judge.consensus.min_agreement_threshold or 0) > 0:
        threshold = judge.consensus.min_agreement_threshold or DEFAULT_AGREEMENT
    if had_warnings or spread > threshold:
        return "low"
    return "high" if spread == 0 else "medium"
