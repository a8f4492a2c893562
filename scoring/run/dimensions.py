"""Scorecard dimensions: each source turns evidence or results into a 0–1 score (docs/scoring.md
§10, §11)."""

from __future__ import annotations

import math
from typing import Any

from .. import layers
from ..compat.goquote import quote
from ..compat.textform import first_non_empty
from ..judges.call_events import BUDGET_STOP, UNJUDGEABLE
from ..record import pricing
from ..spec.models import Dimension, Envelope
from . import behavioral, collectors
from .records import DimensionResult, MetricResult
from .source import Inputs, Source


def score_dimension(dimension: Dimension, given: Inputs) -> DimensionResult:
    """The result of one declared dimension."""
    source = SOURCES.get(dimension.source) or layers.source(dimension.source)
    if source is None:
        reason = f"unsupported dimension source {quote(dimension.source)}"
        return _result(dimension, "error", None, reason)
    return source(dimension, given)


def _result(dimension: Dimension, state: Any, score: float | None, reason: str = ""
            ) -> DimensionResult:
    return DimensionResult(key=dimension.key, state=state, score=score, reason=reason,
                           better_direction=dimension.better_direction)


def _available(dimension: Dimension, score: float, reason: str = "") -> DimensionResult:
    if math.isnan(score):  # the run's own numbers (inf - inf tokens, 0 × inf cost)
        return _result(dimension, "available", 0.0, f"scored 0: {NOT_A_NUMBER}")
    return _result(dimension, "available", score, reason)


#: Why a dimension whose value is NaN scores 0. Go would carry the NaN into the overall
#: score, which no JSON can hold; here it raised, and the run was void (found by a
#: red-team pass: token counts of 1e308 and -1e308 sum to NaN).
NOT_A_NUMBER = "the run's evidence gives no number (NaN)"


def _unavailable(dimension: Dimension, reason: str) -> DimensionResult:
    return _result(dimension, "unavailable", None, reason)


def _validators(dimension: Dimension, given: Inputs) -> DimensionResult:
    """``averageScopedValidators``: the first scoped validator that is not available
    decides (error or unavailable), else the plain mean of the scores."""
    scope = set(dimension.validators)
    scoped = [r for r in given.validators if not scope or r.key in scope]
    if not scoped:
        return _unavailable(dimension, "no validators in scope")
    total = 0.0
    for result in scoped:
        if result.state == "error":
            why = first_non_empty(result.reason, "validator error")
            reason = f"validator {quote(result.key)} errored: {why}"
            return _result(dimension, "error", None, reason)
        if result.state != "available" or result.normalized_score is None:
            why = first_non_empty(result.reason, "missing validator evidence")
            return _unavailable(dimension, f"validator {quote(result.key)} is unavailable: {why}")
        total += result.normalized_score
    return _available(dimension, total / len(scoped))


def _metric_by_collector(given: Inputs, collector: str) -> MetricResult | None:
    return next((m for m in given.metrics if m.collector == collector), None)


def _reliability(dimension: Dimension, given: Inputs) -> DimensionResult:
    completed = _metric_by_collector(given, "run_completed_successfully")
    failures = _metric_by_collector(given, "run_failure_count")
    if completed is None or failures is None:
        return _unavailable(dimension, "reliability requires completion and failure-count "
                                       "metrics")
    if completed.state != "available" or completed.boolean_value is None:
        return _unavailable(dimension, "completion metric is unavailable")
    if failures.state != "available" or failures.numeric_value is None:
        return _unavailable(dimension, "failure-count metric is unavailable")
    ok = completed.boolean_value and failures.numeric_value == 0
    return _available(dimension, 1.0 if ok else 0.0)


def _latency(dimension: Dimension, given: Inputs) -> DimensionResult:
    latency = collectors.total_latency_ms(given.evidence)
    if latency is None:
        return _unavailable(dimension, "latency evidence is unavailable")
    envelope = dimension.normalization
    if envelope is None or envelope.target is None or envelope.max is None:
        return _unavailable(dimension, "latency normalization config is unavailable")
    return _available(dimension, lower_is_better(float(latency), envelope.target, envelope.max))


def _cost(dimension: Dimension, given: Inputs) -> DimensionResult:
    cost, reason, _ = pricing.run_model_cost_usd(given.spec, given.evidence)
    if cost is None:
        return _unavailable(dimension, reason)
    envelope = dimension.normalization
    if envelope is None or envelope.target is None or envelope.max is None:
        return _unavailable(dimension, "cost normalization config is unavailable")
    return _available(dimension, lower_is_better(cost, envelope.target, envelope.max))


def _metric(dimension: Dimension, given: Inputs) -> DimensionResult:
    if not dimension.metric:
        return _result(dimension, "error", None, "dimension metric key is not set")
    metric = next((m for m in given.metrics if m.key == dimension.metric), None)
    if metric is None or metric.state != "available" or metric.numeric_value is None:
        return _unavailable(dimension, f"metric {quote(dimension.metric)} is unavailable")
    envelope = dimension.normalization
    if envelope is None or envelope.target is None or envelope.max is None:
        return _unavailable(dimension, "metric normalization config is unavailable")
    if dimension.better_direction not in ("lower", "higher"):
        reason = f"unsupported better_direction {quote(dimension.better_direction)}"
        return _result(dimension, "error", None, reason)
    value = normalize(metric.numeric_value, envelope, dimension.better_direction)
    return _available(dimension, value)


def _behavioral(dimension: Dimension, given: Inputs) -> DimensionResult:
    state, score, reason = behavioral.behavioral_dimension(
        given.spec, given.evidence, given.validators)
    return _result(dimension, state, score, reason)


def _llm_judge(dimension: Dimension, given: Inputs) -> DimensionResult:
    """``llmJudgeDimensionScore``: the judge's result, unavailable without a score."""
    if not dimension.judge_key:
        return _result(dimension, "error", None, "dimension judge_key is not set")
    missing = f"llm judge {quote(dimension.judge_key)} is unavailable"
    judged = given.judge_results.get(dimension.judge_key)
    if judged is None:
        return _unavailable(dimension, missing)
    score = judged.get("normalized_score")
    reason = str(judged.get("reason") or "")
    if reason.startswith((BUDGET_STOP, UNJUDGEABLE)):  # evalfleet's: the run's evidence
        return _available(dimension, 0.0, f"scored 0: {reason}")  # kept the judge out
    if isinstance(score, bool) or not isinstance(score, int | float):
        return _unavailable(dimension, first_non_empty(reason, missing))
    return _available(dimension, float(score))


def _human_preference(dimension: Dimension, given: Inputs) -> DimensionResult:
    if given.human_preference is None:
        return _unavailable(dimension, "human preference evidence is unavailable")
    return _available(dimension, float(given.human_preference))


def lower_is_better(value: float, target: float, limit: float) -> float:
    """Go's ``normalizeLowerIsBetter``: ≤ target is 1, ≥ max is 0, linear between."""
    if value <= target:
        return 1.0
    if value >= limit:
        return 0.0
    if limit <= target:
        return 0.0
    return 1 - ((value - target) / (limit - target))


def higher_is_better(value: float, target: float, floor: float) -> float:
    """Go's ``normalizeHigherIsBetter``: ≥ target is 1, ≤ floor is 0, linear between."""
    if value >= target:
        return 1.0
    if value <= floor:
        return 0.0
    if target <= floor:
        return 0.0
    return (value - floor) / (target - floor)


def normalize(value: float, envelope: Envelope | None, direction: str) -> float:
    """Map a raw value into [0, 1] through a normalization envelope (§11)."""
    target = envelope.target if envelope and envelope.target is not None else 0.0
    limit = envelope.max if envelope and envelope.max is not None else 0.0
    if direction == "higher":
        return higher_is_better(value, target, limit)
    return lower_is_better(value, target, limit)


SOURCES: dict[str, Source] = {
    "validators": _validators,
    "reliability": _reliability,
    "latency": _latency,
    "cost": _cost,
    "metric": _metric,
    "behavioral": _behavioral,
    "llm_judge": _llm_judge,
    "human_preference": _human_preference,
}
"""AgentClash's dimension sources; a layer's (:mod:`scoring.layers`) come on top."""
