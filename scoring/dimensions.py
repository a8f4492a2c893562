"""Scorecard dimensions: each source turns evidence or results into a 0–1 score (§10, §11)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from . import behavioral, metrics, pricing
from .clawdiators import sources as layer
from .clawdiators.runinfo import RunInfo
from .evidence import Evidence
from .results import DimensionResult, MetricResult, ValidatorResult
from .spec import Dimension, Envelope, EvaluationSpec


@dataclass(frozen=True)
class Inputs:
    """What dimension sources read: everything evaluated before them."""

    spec: EvaluationSpec
    evidence: Evidence
    validators: list[ValidatorResult]
    metrics: list[MetricResult]
    judge_results: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    human_preference: float | None = None
    run_info: RunInfo | None = None
    """What the Clawdiators layer reads from the events (trajectory, evaluator, manifest)."""


def score_dimension(dimension: Dimension, given: Inputs) -> DimensionResult:
    """The result of one declared dimension."""
    source = SOURCES.get(dimension.source)
    if source is None:
        return _result(dimension, "error", None, f'unsupported source "{dimension.source}"')
    return source(dimension, given)


def _result(dimension: Dimension, state: Any, score: float | None, reason: str = ""
            ) -> DimensionResult:
    return DimensionResult(key=dimension.key, state=state, score=score, reason=reason,
                           better_direction=dimension.better_direction)


def _available(dimension: Dimension, score: float, reason: str = "") -> DimensionResult:
    return _result(dimension, "available", score, reason)


def _unavailable(dimension: Dimension, reason: str) -> DimensionResult:
    return _result(dimension, "unavailable", None, reason)


def _validators(dimension: Dimension, given: Inputs) -> DimensionResult:
    scope = dimension.validators or [v.key for v in given.spec.validators]
    scoped = [r for r in given.validators if r.key in scope]
    if not scoped:
        return _unavailable(dimension, "no validators in scope")
    for result in scoped:
        if result.state == "error":
            reason = f'validator "{result.key}" has evaluator error: {result.reason}'
            return _result(dimension, "error", None, reason)
    for result in scoped:
        if result.state != "available" or result.normalized_score is None:
            reason = result.reason or f'validator "{result.key}" is unavailable'
            return _unavailable(dimension, reason)
    return _available(dimension, sum(r.normalized_score or 0.0 for r in scoped) / len(scoped))


def _metric_by_collector(given: Inputs, collector: str) -> MetricResult | None:
    return next((m for m in given.metrics if m.collector == collector), None)


def _reliability(dimension: Dimension, given: Inputs) -> DimensionResult:
    completed = _metric_by_collector(given, "run_completed_successfully")
    failures = _metric_by_collector(given, "run_failure_count")
    for name, metric in (("run_completed_successfully", completed),
                         ("run_failure_count", failures)):
        if metric is None:
            return _unavailable(dimension, f'reliability requires a "{name}" metric')
        if metric.state != "available":
            reason = metric.reason or f'metric "{metric.key}" is unavailable'
            return _unavailable(dimension, reason)
    ok = bool(completed and completed.boolean_value) and (failures and failures.numeric_value) == 0
    return _available(dimension, 1.0 if ok else 0.0)


def _latency(dimension: Dimension, given: Inputs) -> DimensionResult:
    latency = metrics.total_latency_ms(given.evidence)
    if latency is None:
        return _unavailable(dimension, "latency evidence is unavailable")
    return _available(dimension, normalize(float(latency), dimension.normalization, "lower"))


def _cost(dimension: Dimension, given: Inputs) -> DimensionResult:
    cost, reason, _ = pricing.run_model_cost_usd(given.spec, given.evidence)
    if cost is None:
        return _unavailable(dimension, reason or "cost evidence is unavailable")
    return _available(dimension, normalize(cost, dimension.normalization, "lower"))


def _metric(dimension: Dimension, given: Inputs) -> DimensionResult:
    metric = next((m for m in given.metrics if m.key == dimension.metric), None)
    if metric is None:
        return _unavailable(dimension, f'metric "{dimension.metric}" is unavailable')
    if metric.state == "error":
        return _result(dimension, "error", None, metric.reason)
    if metric.state != "available" or metric.numeric_value is None:
        reason = metric.reason or f'metric "{metric.key}" has no numeric value'
        return _unavailable(dimension, reason)
    value = normalize(metric.numeric_value, dimension.normalization, dimension.better_direction)
    return _available(dimension, value)


def _behavioral(dimension: Dimension, given: Inputs) -> DimensionResult:
    state, score, reason = behavioral.behavioral_dimension(
        given.spec, given.evidence, given.validators)
    return _result(dimension, state, score, reason)


def _llm_judge(dimension: Dimension, given: Inputs) -> DimensionResult:
    judged = given.judge_results.get(dimension.judge_key)
    score = judged.get("normalized_score") if judged else None
    if not isinstance(score, int | float):
        reason = str(judged.get("reason") or "") if judged else ""
        return _unavailable(dimension, reason or f'llm judge "{dimension.judge_key}" '
                            "result is unavailable")
    return _available(dimension, float(score), str(judged.get("reason") or "") if judged else "")


def _human_preference(dimension: Dimension, given: Inputs) -> DimensionResult:
    if given.human_preference is None:
        return _unavailable(dimension, "human preference score is unavailable")
    return _available(dimension, float(given.human_preference))


def normalize(value: float, envelope: Envelope | None, direction: str) -> float:
    """Map a raw value into [0, 1] through a normalization envelope (§11)."""
    target = envelope.target if envelope and envelope.target is not None else 0.0
    limit = envelope.max if envelope and envelope.max is not None else 0.0
    if direction == "higher":
        if value >= target:
            return 1.0
        if value <= limit:
            return 0.0
        return (value - limit) / (target - limit) if target > limit else 0.0
    if value <= target:
        return 1.0
    if value >= limit:
        return 0.0
    return 1.0 - (value - target) / (limit - target) if limit > target else 0.0


SOURCES: dict[str, Callable[[Dimension, Inputs], DimensionResult]] = {
    "validators": _validators,
    "reliability": _reliability,
    "latency": _latency,
    "cost": _cost,
    "metric": _metric,
    "behavioral": _behavioral,
    "llm_judge": _llm_judge,
    "human_preference": _human_preference,
    **layer.SOURCES,
}
