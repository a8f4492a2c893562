"""Metric collectors (docs/scoring.md §8)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from helpers import evidence_of, spec_with

from evalfleet.scoring.clawdiators.sources import COLLECTORS as LAYER_COLLECTORS
from evalfleet.scoring.run.collectors import (
    COLLECTORS,
    collect_metric,
    milliseconds_between,
    total_latency_ms,
)
from evalfleet.scoring.run.records import MetricResult, ValidatorResult
from evalfleet.scoring.spec.models import MetricDecl

VALIDATOR = {"key": "v", "type": "exact_match", "target": "final_output",
             "expected_from": "literal:x"}
BASE = datetime(2026, 1, 1, tzinfo=UTC)


def at(ms: float) -> str:
    """ISO timestamp ``ms`` milliseconds after the base time."""
    return (BASE + timedelta(milliseconds=ms)).isoformat()


def event(type_: str, seq: int, ms: float = 0, **payload: Any) -> dict[str, Any]:
    """A raw event mapping."""
    return {"type": type_, "sequence_number": seq, "occurred_at": at(ms), "payload": payload}


def validator(score: float | None, state: str = "available") -> ValidatorResult:
    """A validator result with this score."""
    return ValidatorResult.model_validate({"key": "v", "type": "exact_match", "state": state,
                                           "outcome_class": "", "normalized_score": score})


def collect(collector: str, events: list[dict[str, Any]],
            validators: list[ValidatorResult] | None = None, **spec_extra: Any) -> MetricResult:
    """Collect one metric with this collector."""
    decl = MetricDecl(key="m", type="numeric", collector=collector, unit="u")
    spec = spec_with(VALIDATOR, **spec_extra)
    return collect_metric(decl, spec, evidence_of(events), validators or [])


STARTED = event("system.run.started", 1, 0)
RUN = [STARTED, event("model.output.delta", 2, 250.9),
       event("system.run.completed", 3, 1234.9, input_tokens=100, output_tokens=50,
             total_tokens=150, tool_call_count=4)]
PRICING = {"models": [{"provider_key": "openai", "provider_model_id": "gpt-4o",
                       "input_cost_per_million_tokens": 2.5,
                       "output_cost_per_million_tokens": 10.0}]}


@pytest.mark.parametrize(("collector", "events", "expected"), [
    ("run_total_latency_ms", RUN, 1234.0),
    ("run_total_latency_ms", [STARTED, event("system.run.failed", 2, 99.99)], 99.0),
    ("run_total_latency_ms", [STARTED, event("system.run.completed", 2, 5000, latency_ms=750)],
     750.0),
    ("run_ttft_ms", RUN, 250.0),
    ("run_ttft_ms", [STARTED, event("system.output.finalized", 2, 42, final_output="x")], 42.0),
    ("run_input_tokens", RUN, 100.0),
    ("run_output_tokens", RUN, 50.0),
    ("run_total_tokens", RUN, 150.0),
    ("run_tool_call_count", RUN, 4.0),
    ("run_tool_call_count", [event("tool.call.completed", 1, tool_name="a"),
                             event("tool.call.failed", 2, tool_name="b")], 2.0),
    ("run_agent_tokens", [*RUN, event("race.standings.injected", 4, tokens_added=30)], 120.0),
    ("run_agent_tokens", [*RUN, event("race.standings.injected", 4, tokens_added=500)], 0.0),
    ("run_race_context_tokens", [], 0.0),
    ("run_race_context_tokens", [event("race.standings.injected", 1, tokens_added=7),
                                 event("race.standings.injected", 2, tokens_added=5)], 12.0),
    ("run_failure_count", [], 0.0),
    ("run_failure_count", [event("system.run.failed", 1), event("sandbox.command.failed", 2),
                           event("tool.call.failed", 3, tool_name="x")], 3.0),
])
def test_numeric_collectors(collector: str, events: list[dict[str, Any]],
                            expected: float) -> None:
    """Each collector's value; latencies are whole milliseconds, truncated."""
    result = collect(collector, events)
    assert (result.state, result.numeric_value, result.reason) == ("available", expected, "")


@pytest.mark.parametrize(("collector", "events", "reason"), [
    ("run_total_latency_ms", [event("system.run.completed", 1, 10)],
     "latency evidence is unavailable"),
    ("run_total_latency_ms", [STARTED], "latency evidence is unavailable"),
    ("run_ttft_ms", [STARTED, event("system.run.completed", 2, 10)],
     "time-to-first-output evidence is unavailable"),
    ("run_ttft_ms", [event("model.output.delta", 1, 10)],
     "time-to-first-output evidence is unavailable"),
    ("run_input_tokens", [STARTED], "input token usage is unavailable"),
    ("run_output_tokens", [STARTED], "output token usage is unavailable"),
    ("run_total_tokens", [STARTED], "total token usage is unavailable"),
    ("run_agent_tokens", [event("system.run.completed", 1, input_tokens=3)],
     "agent token usage is unavailable"),
    ("run_tool_call_count", [STARTED], "tool call count is unavailable"),
    ("run_completed_successfully", [STARTED], "terminal success evidence is unavailable"),
    ("run_model_cost_usd", [STARTED], "model pricing is unavailable"),
])
def test_unavailable_collectors(collector: str, events: list[dict[str, Any]],
                                reason: str) -> None:
    """Collectors without their evidence are unavailable, with AgentClash's reason."""
    result = collect(collector, events)
    assert (result.state, result.numeric_value, result.reason) == ("unavailable", None, reason)
    assert result.metadata["reason"] == reason


@pytest.mark.parametrize(("events", "expected"), [
    ([event("system.run.completed", 1)], True),
    ([event("system.run.failed", 1)], False),
    ([event("system.run.failed", 1), event("system.run.completed", 2)], True),
    ([event("system.run.completed", 1), event("system.run.failed", 2)], False),
])
def test_completed_successfully(events: list[dict[str, Any]], expected: bool) -> None:
    """A boolean from the last terminal event, with no numeric value."""
    result = collect("run_completed_successfully", events)
    assert (result.state, result.boolean_value, result.numeric_value) == (
        "available", expected, None)


@pytest.mark.parametrize(("events", "state", "value", "reason"), [
    ([event("model.call.completed", 1, provider_key="openai", provider_model_id="gpt-4o",
            usage={"input_tokens": 1_000_000, "output_tokens": 100_000})],
     "available", 3.5, ""),
    ([event("model.call.completed", 1, provider_key="openai", provider_model_id="gpt-4o-mini",
            usage={"input_tokens": 1})],
     "unavailable", None,
     'model pricing is unavailable for provider "openai" model "gpt-4o-mini"'),
    ([], "unavailable", None, "model usage evidence is unavailable"),
])
def test_model_cost(events: list[dict[str, Any]], state: str, value: float | None,
                    reason: str) -> None:
    """run_model_cost_usd reads pricing.py; metadata carries the breakdown when priced."""
    result = collect("run_model_cost_usd", events, pricing=PRICING)
    assert (result.state, result.numeric_value, result.reason) == (state, value, reason)
    assert ("breakdown" in result.metadata) == (state == "available")


@pytest.mark.parametrize(("validators", "state", "value", "reason"), [
    ([validator(1.0), validator(0.0)], "available", 0.5, ""),
    ([validator(1.0), validator(0.25)], "available", 0.625, ""),
    ([validator(1.0)], "available", 1.0, ""),
    ([], "unavailable", None, "validator pass rate requires validator results"),
    ([validator(1.0), validator(None, "unavailable")], "unavailable", None,
     "validator pass rate requires all validators to be available"),
    ([validator(None, "error")], "unavailable", None,
     "validator pass rate requires all validators to be available"),
    ([validator(None)], "unavailable", None,
     "validator pass rate requires all validators to be available"),
])
def test_validator_pass_rate(validators: list[ValidatorResult], state: str,
                             value: float | None, reason: str) -> None:
    """Mean normalized score (graded scores count fractionally); every validator available."""
    result = collect("validator_pass_rate", [], validators)
    assert (result.state, result.numeric_value, result.reason) == (state, value, reason)


FAILED_TWICE = [event("tool.call.failed", 1, tool_name="a", failure_origin="policy"),
                event("tool.call.failed", 2, tool_name="a", failure_origin="policy"),
                event("tool.call.completed", 3, tool_name="b")]


@pytest.mark.parametrize(("collector", "events", "validators", "value", "reason"), [
    ("behavioral_recovery_score", FAILED_TWICE, [], 0.5, ""),
    ("behavioral_exploration_efficiency_score", FAILED_TWICE, [], 2 / 3, ""),
    ("behavioral_error_cascade_score", FAILED_TWICE, [], 0.5, ""),
    ("behavioral_scope_adherence_score", FAILED_TWICE, [], 1 / 3, ""),
    ("behavioral_recovery_score", [], [], 1.0, ""),
    ("behavioral_recovery_score",
     [event("turn.completed", 1, turn_index=0, mismatch=True)], [validator(None, "error")],
     None, "validator outcome requires all validators to be available"),
    ("behavioral_recovery_score",
     [event("turn.completed", 1, turn_index=0, mismatch=True)], [validator(0.0)], 0.0, ""),
])
def test_behavioral_collectors(collector: str, events: list[dict[str, Any]],
                               validators: list[ValidatorResult], value: float | None,
                               reason: str) -> None:
    """The behavioral collectors report their signal's score or its unavailable reason."""
    result = collect(collector, events, validators)
    assert (result.numeric_value, result.reason) == (
        value if value is None else pytest.approx(value), reason)
    assert result.state == ("unavailable" if value is None else "available")


@pytest.mark.parametrize("collector", ["run_latency", "", "RUN_TOTAL_TOKENS", "custom_metric"])
def test_unknown_collector_is_error(collector: str) -> None:
    """Any other collector name is a metric error (which later makes the scorecard invalid)."""
    result = collect(collector, RUN)
    assert (result.state, result.reason) == ("error", f'collector "{collector}" is not supported')


def test_declaration_fields_copied() -> None:
    """Key, type, collector and the free-text unit label come from the declaration."""
    decl = MetricDecl(key="lat", type="text", collector="run_total_latency_ms", unit="ms!")
    result = collect_metric(decl, spec_with(VALIDATOR), evidence_of(RUN), [])
    assert (result.key, result.type, result.collector, result.unit) == (
        "lat", "text", "run_total_latency_ms", "ms!")
    assert result.metadata["state"] == "available"
    assert result.metadata["ttft_ms"] == 250


def test_collector_table_covers_section_8() -> None:
    """The table names every §8 collector (calibration kept for parity; validation rejects it)."""
    assert set(COLLECTORS) == {
        "run_total_latency_ms", "run_ttft_ms", "run_input_tokens", "run_output_tokens",
        "run_total_tokens", "run_agent_tokens", "run_race_context_tokens",
        "run_tool_call_count", "run_model_cost_usd", "run_completed_successfully",
        "run_failure_count", "validator_pass_rate", "behavioral_recovery_score",
        "behavioral_exploration_efficiency_score", "behavioral_error_cascade_score",
        "behavioral_scope_adherence_score", "behavioral_confidence_calibration_score"}
    assert set(LAYER_COLLECTORS) == {"run_model_call_count"}  # the Clawdiators layer's


@pytest.mark.parametrize(("start_ms", "end_ms", "expected"), [
    (0, 1234.999, 1234),
    (0, 0.999, 0),
    (100, 0, -100),
    (100.5, 0, -100),
    (0, 86_400_000 * 2 + 5, 172_800_005),
])
def test_milliseconds_truncate_toward_zero(start_ms: float, end_ms: float,
                                           expected: int) -> None:
    """Durations become whole milliseconds truncated toward zero, as Go's Milliseconds()."""
    start = BASE + timedelta(milliseconds=start_ms)
    end = BASE + timedelta(milliseconds=end_ms)
    assert milliseconds_between(start, end) == expected


def test_total_latency_ms_for_the_latency_dimension() -> None:
    """total_latency_ms gives the same integer the collector reports, or None."""
    assert (total_latency_ms(evidence_of(RUN)), total_latency_ms(evidence_of([STARTED]))) == (
        1234, None)


def test_unknown_collector_makes_the_scorecard_invalid() -> None:
    """Through the engine: an unsupported collector is a metric error ⇒ validity invalid."""
    from evalfleet.scoring.run.engine import evaluate

    spec = spec_with(VALIDATOR, metrics=[
        {"key": "ok", "type": "numeric", "collector": "run_failure_count"},
        {"key": "bad", "type": "numeric", "collector": "run_vibes"}])
    card = evaluate(spec, [event("system.run.completed", 1, final_output="x")],
                    [{"payload": {"q": 1}}])
    assert card.validity == "invalid"
    assert 'collector "run_vibes" is not supported' in card.validity_reason
