"""The overall verdict: weighted, binary and hybrid strategies with gates (docs/scoring.md §12).

Mirrors AgentClash's ``computeOverallScore`` (``engine.go``) decision for decision:

* only dimensions that are available with a score take part; the weighted mean is
  ``Σ wᵢsᵢ / Σ wᵢ`` (weight 1 when absent; the plain mean when the weights sum to 0);
* a dimension is *required* when it is a gate or the strategy is binary; an unavailable or
  errored required dimension outranks a failing gate, wherever each is declared;
* a passing verdict has no reason (``""``); reasons name the first offending dimension;
* with no available dimension at all, only an unavailable required one gives a verdict.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from ..compat.goquote import quote
from ..spec.models import Dimension, EvaluationSpec
from .records import DimensionResult

NO_DIMENSIONS = "no dimensions produced an available score"


class Verdict(NamedTuple):
    """Overall score (0–1 or None), pass verdict (or None) and the reason."""

    overall: float | None
    passed: bool | None
    reason: str


Pair = tuple[Dimension, DimensionResult]


def decide(spec: EvaluationSpec, results: list[DimensionResult]) -> Verdict:
    """Apply the spec's strategy to the dimension results (declaration order)."""
    pairs = list(zip(spec.scorecard.dimensions, results, strict=True))
    strategy = spec.scorecard.strategy
    available = [p for p in pairs if is_available(p[1])]
    missing = _first_missing_required(pairs, strategy)
    if not available:
        return _nothing_available(strategy, missing)
    return STRATEGIES[strategy](spec, available, missing)


def is_available(result: DimensionResult) -> bool:
    return result.state == "available" and result.score is not None


def weights(pairs: list[Pair]) -> list[float]:
    """Weights normalized over ``pairs`` (absent weight = 1; all-zero weights = plain mean)."""
    raw = [d.weight if d.weight is not None else 1.0 for d, _ in pairs]
    total = sum(raw)
    if total == 0:
        return [1.0 / len(pairs)] * len(pairs) if pairs else []
    return [w / total for w in raw]


def weighted_mean(pairs: list[Pair]) -> float:
    """Go's ``weightedAverage``: Σ wᵢsᵢ / Σ wᵢ, accumulated in declaration order."""
    total_weight = weighted_sum = 0.0
    for dimension, result in pairs:
        weight = dimension.weight if dimension.weight is not None else 1.0
        total_weight += weight
        weighted_sum += weight * (result.score or 0.0)
    if total_weight == 0:
        plain = 0.0
        for _, result in pairs:
            plain += result.score or 0.0
        return plain / len(pairs)
    return weighted_sum / total_weight


def _required(dimension: Dimension, strategy: str) -> bool:
    return dimension.gate or strategy == "binary"


def _first_missing_required(pairs: list[Pair], strategy: str) -> DimensionResult | None:
    """The first required dimension without an available score, in declaration order."""
    return next((r for d, r in pairs if _required(d, strategy) and not is_available(r)), None)


def _first_failed_gate(pairs: list[Pair], strategy: str) -> str:
    for dimension, result in pairs:
        threshold = dimension.pass_threshold
        if _required(dimension, strategy) and threshold is not None and \
                (result.score or 0.0) < threshold:
            return dimension.key
    return ""


def _missing_reason(strategy: str, result: DimensionResult) -> str:
    """``unavailableGateReason``: binary says "dimension", the others "gated dimension"."""
    label = "dimension" if strategy == "binary" else "gated dimension"
    problem = "has evaluator error" if result.state == "error" else "is unavailable"
    return f"{strategy}: {label} {quote(result.key)} {problem}"


def _nothing_available(strategy: str, missing: DimensionResult | None) -> Verdict:
    if strategy == "binary":
        reason = _missing_reason(strategy, missing) if missing else \
            "required dimension is unavailable"
        return Verdict(0.0, False, reason)
    if missing is not None:
        score = 0.0 if strategy == "hybrid" else None
        return Verdict(score, False, _missing_reason(strategy, missing))
    return Verdict(None, None, NO_DIMENSIONS)


def _weighted(spec: EvaluationSpec, available: list[Pair],
              missing: DimensionResult | None) -> Verdict:
    score = weighted_mean(available)
    if missing is not None:
        return Verdict(score, False, _missing_reason("weighted", missing))
    failed = _first_failed_gate(available, "weighted")
    if failed:
        reason = f"weighted: gated dimension {quote(failed)} below pass_threshold"
        return Verdict(score, False, reason)
    threshold = spec.scorecard.pass_threshold
    if threshold is not None and score < threshold:
        return Verdict(score, False, f"weighted: overall score {score:.4f} below scorecard "
                                     f"pass_threshold {threshold:.4f}")
    return Verdict(score, True, "")


def _binary(spec: EvaluationSpec, available: list[Pair],
            missing: DimensionResult | None) -> Verdict:
    if missing is not None:
        return Verdict(0.0, False, _missing_reason("binary", missing))
    failed = _first_failed_gate(available, "binary")
    if failed:
        return Verdict(0.0, False, f"binary: dimension {quote(failed)} below pass_threshold")
    return Verdict(1.0, True, "")


def _hybrid(spec: EvaluationSpec, available: list[Pair],
            missing: DimensionResult | None) -> Verdict:
    if missing is not None:
        return Verdict(0.0, False, _missing_reason("hybrid", missing))
    failed = _first_failed_gate(available, "hybrid")
    if failed:
        return Verdict(0.0, False, f"hybrid: gated dimension {quote(failed)} below pass_threshold")
    scored = [p for p in available if not p[0].gate]
    if not scored:
        return Verdict(1.0, True, "hybrid: all dimensions are gates and all passed")
    score = weighted_mean(scored)
    threshold = spec.scorecard.pass_threshold
    if threshold is not None and score < threshold:
        return Verdict(score, False, f"hybrid: non-gate weighted score {score:.4f} below "
                                     f"scorecard pass_threshold {threshold:.4f}")
    return Verdict(score, True, "")


STRATEGIES: dict[str, Callable[[EvaluationSpec, list[Pair], DimensionResult | None],
                               Verdict]] = {
    "weighted": _weighted,
    "binary": _binary,
    "hybrid": _hybrid,
}
