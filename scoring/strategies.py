"""The overall verdict: weighted, binary and hybrid strategies with gates (§12)."""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from .results import DimensionResult
from .spec import Dimension, EvaluationSpec


class Verdict(NamedTuple):
    """Overall score (0–1 or None), pass verdict (or None) and the reason."""

    overall: float | None
    passed: bool | None
    reason: str


Pair = tuple[Dimension, DimensionResult]


def decide(spec: EvaluationSpec, results: list[DimensionResult]) -> Verdict:
    """Apply the spec's strategy to the dimension results (declaration order)."""
    pairs = list(zip(spec.scorecard.dimensions, results, strict=True))
    return STRATEGIES[spec.scorecard.strategy](spec, pairs)


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
    return sum(w * (r.score or 0.0) for w, (_, r) in zip(weights(pairs), pairs, strict=True))


def _problem(dimension: Dimension, result: DimensionResult, binary: bool) -> str | None:
    """Why a required dimension blocks the verdict, or None.

    Under binary every dimension is required and is named a plain "dimension" (§12).
    """
    if not (binary or dimension.gate):
        return None
    label = "dimension" if binary else "gated dimension"
    if result.state == "error":
        return f'{label} "{dimension.key}" has evaluator error'
    if not is_available(result):
        return f'{label} "{dimension.key}" is unavailable'
    if (result.score or 0.0) < (dimension.pass_threshold or 0.0):
        return f'{label} "{dimension.key}" below pass_threshold'
    return None


def _first_problem(pairs: list[Pair], binary: bool) -> str | None:
    for dimension, result in pairs:
        problem = _problem(dimension, result, binary)
        if problem:
            return problem
    return None


def _threshold_check(name: str, label: str, score: float, threshold: float | None) -> Verdict:
    if threshold is not None and score < threshold:
        text = f"{name}: {label} {score:.4f} below scorecard pass_threshold {threshold:.4f}"
        return Verdict(score, False, text)
    if threshold is not None:
        return Verdict(score, True, f"{name}: {label} {score:.4f} meets scorecard "
                                    f"pass_threshold {threshold:.4f}")
    return Verdict(score, True, f"{name}: {label} {score:.4f}")


def _weighted(spec: EvaluationSpec, pairs: list[Pair]) -> Verdict:
    available = [p for p in pairs if is_available(p[1])]
    problem = _first_problem(pairs, binary=False)
    if not available:
        reason = "no dimensions produced an available score"
        return Verdict(None, False if problem else None, f"weighted: {problem or reason}")
    overall = weighted_mean(available)
    if problem:
        return Verdict(overall, False, f"weighted: {problem}")
    return _threshold_check("weighted", "overall score", overall, spec.scorecard.pass_threshold)


def _binary(spec: EvaluationSpec, pairs: list[Pair]) -> Verdict:
    problem = _first_problem(pairs, binary=True)
    if problem or not pairs:
        return Verdict(0.0, False, f"binary: {problem or 'no dimensions'}")
    return Verdict(1.0, True, "binary: all dimensions passed")


def _hybrid(spec: EvaluationSpec, pairs: list[Pair]) -> Verdict:
    problem = _first_problem(pairs, binary=False)
    if problem:
        return Verdict(0.0, False, f"hybrid: {problem}")
    scored = [p for p in pairs if not p[0].gate and is_available(p[1])]
    if not scored:
        return Verdict(1.0, True, "hybrid: all dimensions are gates and all passed")
    overall = weighted_mean(scored)
    return _threshold_check("hybrid", "non-gate weighted score", overall,
                            spec.scorecard.pass_threshold)


STRATEGIES: dict[str, Callable[[EvaluationSpec, list[Pair]], Verdict]] = {
    "weighted": _weighted,
    "binary": _binary,
    "hybrid": _hybrid,
}
