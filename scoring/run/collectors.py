"""Metric collectors (docs/scoring.md §8): one small function per collector name.

A collector reads the evidence (and, for some, the validator results or the spec) and
yields a value or the reason it has none. An unknown collector is not a load-time error in
AgentClash; it is a metric in state ``error``, which makes the scorecard invalid.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from .. import layers
from ..compat.goquote import quote
from ..record.evidence import Evidence
from ..record.pricing import run_model_cost_usd
from ..spec.models import EvaluationSpec, MetricDecl
from .behavioral import signal_value
from .collector import Collected, Collector, Context, unavailable, value
from .records import MetricResult, ValidatorResult


def collect_metric(decl: MetricDecl, spec: EvaluationSpec, evidence: Evidence,
                   validator_results: list[ValidatorResult],
                   readings: Mapping[str, object] | None = None) -> MetricResult:
    """Evaluate one declared metric.

    Args:
        decl: The metric declaration (key, type, collector, unit).
        spec: The evaluation spec.
        evidence: The run's evidence.
        validator_results: The validator results, in declaration order.
        readings: Each registered layer's reading of the events, by layer name (a layer's
            collectors read theirs).

    Returns:
        The metric result; an unknown collector gives state ``error``.
    """
    collector = COLLECTORS.get(decl.collector) or layers.collector(spec, decl.collector)
    if collector is None:
        outcome = Collected("error", reason=f"collector {quote(decl.collector)} is not supported")
    else:
        outcome = collector(Context(spec, evidence, validator_results, dict(readings or {})))
    metadata = {**outcome.metadata, "state": outcome.state, "collector": decl.collector}
    if outcome.reason:
        metadata["reason"] = outcome.reason
    return MetricResult(key=decl.key, type=decl.type, collector=decl.collector,
                        state=outcome.state, unit=decl.unit, numeric_value=outcome.numeric,
                        boolean_value=outcome.boolean, reason=outcome.reason, metadata=metadata)


def milliseconds_between(start: datetime, end: datetime) -> int:
    """Whole milliseconds from ``start`` to ``end``, truncated toward zero (Go's
    ``Duration.Milliseconds``)."""
    delta = end - start
    micros = (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
    return micros // 1000 if micros >= 0 else -(-micros // 1000)


def total_latency_ms(evidence: Evidence) -> int | None:
    """Terminal time − start time in whole milliseconds, or None when either is missing."""
    if evidence.started_at is None or evidence.terminal_at is None:
        return None
    return milliseconds_between(evidence.started_at, evidence.terminal_at)


def _total_latency(ctx: Context) -> Collected:
    latency = total_latency_ms(ctx.evidence)
    if latency is None:
        return unavailable("latency evidence is unavailable")
    ev = ctx.evidence
    metadata: dict[str, Any] = {"started_at": _iso(ev.started_at), "ended_at": _iso(ev.terminal_at)}
    if ev.started_at is not None and ev.first_output_at is not None:
        metadata["first_output_at"] = _iso(ev.first_output_at)
        metadata["ttft_ms"] = milliseconds_between(ev.started_at, ev.first_output_at)
    return value(latency, **metadata)


def _ttft(ctx: Context) -> Collected:
    ev = ctx.evidence
    if ev.started_at is None or ev.first_output_at is None:
        return unavailable("time-to-first-output evidence is unavailable")
    return value(milliseconds_between(ev.started_at, ev.first_output_at),
                 started_at=_iso(ev.started_at), first_output_at=_iso(ev.first_output_at))


def _count(attribute: str, missing: str) -> Collector:
    def collect(ctx: Context) -> Collected:
        count = getattr(ctx.evidence, attribute)
        return unavailable(missing) if count is None else value(count)

    return collect


def _agent_tokens(ctx: Context) -> Collected:
    total = ctx.evidence.total_tokens
    if total is None:
        return unavailable("agent token usage is unavailable")
    return value(max(0, total - ctx.evidence.race_context_tokens))


def _race_context_tokens(ctx: Context) -> Collected:
    return value(ctx.evidence.race_context_tokens)


def _model_cost(ctx: Context) -> Collected:
    usd, reason, metadata = run_model_cost_usd(ctx.spec, ctx.evidence)
    if usd is None:
        return Collected("unavailable", reason=reason, metadata=metadata)
    return Collected("available", numeric=usd, metadata=metadata)


def _completed_successfully(ctx: Context) -> Collected:
    completed = ctx.evidence.completed
    if completed is None:
        return unavailable("terminal success evidence is unavailable")
    return Collected("available", boolean=completed)


def _failure_count(ctx: Context) -> Collected:
    return value(ctx.evidence.failure_count)


def _validator_pass_rate(ctx: Context) -> Collected:
    if not ctx.validators:
        return unavailable("validator pass rate requires validator results")
    scores = [v.normalized_score for v in ctx.validators if v.state == "available"]
    if len(scores) != len(ctx.validators) or None in scores:
        return unavailable("validator pass rate requires all validators to be available")
    return value(sum(s for s in scores if s is not None) / len(scores))


def _behavioral(signal_key: str) -> Collector:
    def collect(ctx: Context) -> Collected:
        signal = signal_value(signal_key, ctx.evidence, ctx.validators)
        if signal.score is None:
            return unavailable(signal.reason or f"behavioral signal {quote(signal_key)} "
                               "is unavailable")
        return value(signal.score, signal_key=signal_key,
                     trace_len=len(ctx.evidence.tool_calls))

    return collect


def _iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.isoformat().replace("+00:00", "Z")



COLLECTORS: dict[str, Collector] = {
    "behavioral_confidence_calibration_score": _behavioral("confidence_calibration"),
    "behavioral_error_cascade_score": _behavioral("error_cascade"),
    "behavioral_exploration_efficiency_score": _behavioral("exploration_efficiency"),
    "behavioral_recovery_score": _behavioral("recovery_behavior"),
    "behavioral_scope_adherence_score": _behavioral("scope_adherence"),
    "run_agent_tokens": _agent_tokens,
    "run_completed_successfully": _completed_successfully,
    "run_failure_count": _failure_count,
    "run_input_tokens": _count("input_tokens", "input token usage is unavailable"),
    "run_model_cost_usd": _model_cost,
    "run_output_tokens": _count("output_tokens", "output token usage is unavailable"),
    "run_race_context_tokens": _race_context_tokens,
    "run_tool_call_count": _count("tool_call_count", "tool call count is unavailable"),
    "run_total_latency_ms": _total_latency,
    "run_total_tokens": _count("total_tokens", "total token usage is unavailable"),
    "run_ttft_ms": _ttft,
    "validator_pass_rate": _validator_pass_rate,
}
"""Every supported collector, by name (AgentClash's ``collectMetric`` switch). A layer's
collectors (:mod:`scoring.layers`) come on top, for the specs that opt into it."""
