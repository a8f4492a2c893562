"""Scorecard dimension sources and normalization envelopes (docs/scoring.md §10, §11)."""

from __future__ import annotations

from typing import Any

import pytest
from helpers import completed, evidence_of

from evalfleet import scoring
from evalfleet.scoring.run.dimensions import normalize, score_dimension
from evalfleet.scoring.run.records import DimensionResult, MetricResult, ValidatorResult
from evalfleet.scoring.run.source import Inputs
from evalfleet.scoring.spec.models import Envelope, EvaluationSpec

START = {"type": "system.run.started", "occurred_at": "2026-01-01T00:00:00Z", "payload": {}}
DONE_1500 = {"type": "system.run.completed", "occurred_at": "2026-01-01T00:00:01.500Z",
             "payload": {"final_output": "x"}}
MODEL_CALL = {"type": "model.call.completed", "occurred_at": "2026-01-01T00:00:01Z",
              "payload": {"provider_key": "openai", "provider_model_id": "gpt-x",
                          "usage": {"input_tokens": 1_000_000, "output_tokens": 500_000}}}


def validator(key: str) -> dict[str, Any]:
    """An exact_match validator declaration."""
    return {"key": key, "type": "exact_match", "target": "final_output",
            "expected_from": "literal:x"}


def spec(*dimensions: dict[str, Any], **extra: Any) -> EvaluationSpec:
    """A valid spec with validators a, b, c and the given dimensions."""
    body: dict[str, Any] = {
        "name": "t", "version_number": 1, "judge_mode": "deterministic",
        "validators": [validator("a"), validator("b"), validator("c")],
        "scorecard": {"dimensions": list(dimensions)},
    }
    body.update(extra)
    return scoring.load_spec(body)


def vres(key: str, state: str = "available", score: float | None = 1.0,
         reason: str = "") -> ValidatorResult:
    """A validator result."""
    return ValidatorResult(key=key, type="exact_match", state=state,
                           outcome_class="pass", normalized_score=score, reason=reason)


def mres(key: str, collector: str, state: str = "available", numeric: float | None = None,
         boolean: bool | None = None, reason: str = "") -> MetricResult:
    """A metric result."""
    return MetricResult(key=key, type="numeric", collector=collector,
                        state=state, numeric_value=numeric,
                        boolean_value=boolean, reason=reason)


def score(the_spec: EvaluationSpec, *, validators: list[ValidatorResult] | None = None,
          metrics: list[MetricResult] | None = None, events: list[dict[str, Any]] | None = None,
          judges: dict[str, dict[str, Any]] | None = None,
          human: float | None = None) -> DimensionResult:
    """The first dimension of ``the_spec`` scored on the given results."""
    given = Inputs(the_spec, evidence_of(events or []), validators or [], metrics or [],
                   judges or {}, human)
    return score_dimension(the_spec.scorecard.dimensions[0], given)


@pytest.mark.parametrize(("value", "target", "limit", "direction", "expected"), [
    pytest.param(50, 100, 200, "lower", 1.0, id="lower-below-target"),
    pytest.param(100, 100, 200, "lower", 1.0, id="lower-at-target"),
    pytest.param(150, 100, 200, "lower", 0.5, id="lower-interpolated"),
    pytest.param(175, 100, 200, "lower", 0.25, id="lower-interpolated-quarter"),
    pytest.param(200, 100, 200, "lower", 0.0, id="lower-at-max"),
    pytest.param(250, 100, 200, "lower", 0.0, id="lower-beyond-max"),
    pytest.param(0.95, 0.9, 0.5, "higher", 1.0, id="higher-above-target"),
    pytest.param(0.9, 0.9, 0.5, "higher", 1.0, id="higher-at-target"),
    pytest.param(0.7, 0.9, 0.5, "higher", 0.5, id="higher-interpolated"),
    pytest.param(0.5, 0.9, 0.5, "higher", 0.0, id="higher-at-floor"),
    pytest.param(0.3, 0.9, 0.5, "higher", 0.0, id="higher-below-floor"),
    pytest.param(100, 100, 100, "lower", 1.0, id="degenerate-lower-equal-at-target"),
    pytest.param(150, 100, 100, "lower", 0.0, id="degenerate-lower-equal-above"),
    pytest.param(75, 100, 50, "lower", 1.0, id="degenerate-lower-inverted-below-target"),
    pytest.param(120, 100, 50, "lower", 0.0, id="degenerate-lower-inverted-above"),
    pytest.param(0.5, 0.5, 0.5, "higher", 1.0, id="degenerate-higher-equal-at-target"),
    pytest.param(0.4, 0.5, 0.5, "higher", 0.0, id="degenerate-higher-equal-below"),
    pytest.param(0.6, 0.5, 0.8, "higher", 1.0, id="degenerate-higher-inverted-above-target"),
    pytest.param(0.4, 0.5, 0.8, "higher", 0.0, id="degenerate-higher-inverted-below"),
])
def test_normalize(value: float, target: float, limit: float, direction: str,
                   expected: float) -> None:
    """Envelopes map values to [0,1]: 1 at/after target, 0 at/after max, linear between."""
    envelope = Envelope(target=target, max=limit)
    assert normalize(value, envelope, direction) == pytest.approx(expected)


CORRECTNESS = {"key": "correctness", "source": "validators"}
SCOPED = {"key": "correctness", "source": "validators", "validators": ["a", "b"]}
RELIABILITY = {"key": "reliability", "source": "reliability"}
RELIABILITY_METRICS = {"metrics": [
    {"key": "ok", "type": "boolean", "collector": "run_completed_successfully"},
    {"key": "fails", "type": "numeric", "collector": "run_failure_count"}]}
LATENCY = {"key": "latency", "source": "latency", "better_direction": "lower",
           "normalization": {"target": 1000, "max": 2000}}
COST = {"key": "cost", "source": "cost", "better_direction": "lower",
        "normalization": {"target": 1.0, "max": 3.0}}
PRICING = {"pricing": {"models": [{"provider_key": "openai", "provider_model_id": "gpt-x",
                                   "input_cost_per_million_tokens": 1.0,
                                   "output_cost_per_million_tokens": 2.0}]}}
M_LOWER = {"key": "m", "source": "metric", "metric": "tokens", "better_direction": "lower",
           "normalization": {"target": 100, "max": 300}}
M_HIGHER = {"key": "m", "source": "metric", "metric": "tokens", "better_direction": "higher",
            "normalization": {"target": 300, "max": 100}}
TOKENS = {"metrics": [{"key": "tokens", "type": "numeric", "collector": "run_total_tokens"}]}
BEHAVIORAL = {"key": "behavioral", "source": "behavioral"}
SIGNALS = {"behavioral": {"signals": [{"key": "error_cascade", "weight": 1}]}}
JUDGE_SPEC = {"judge_mode": "hybrid", "llm_judges": [
    {"key": "j", "mode": "rubric", "rubric": "r", "model": "gpt-4o"}]}
JUDGE = {"key": "quality", "source": "llm_judge", "judge_key": "j"}
HUMAN = {"key": "pref", "source": "human_preference"}
V_OK = [vres("a"), vres("b", score=0.5), vres("c", score=0.0)]


@pytest.mark.parametrize(("dimension", "extra", "kwargs", "state", "value"), [
    # validators
    pytest.param(CORRECTNESS, {}, {"validators": V_OK}, "available", 0.5,
                 id="validators-all-plain-mean"),
    pytest.param(SCOPED, {}, {"validators": V_OK}, "available", 0.75,
                 id="validators-scoped-mean"),
    pytest.param(CORRECTNESS, {}, {"validators": [vres("a"), vres("b", "unavailable", None),
                                                  vres("c", "error", None, "boom")]},
                 "unavailable", 'validator "b" is unavailable: missing validator evidence',
                 id="validators-first-unavailable-decides-before-a-later-error"),
    pytest.param(CORRECTNESS, {}, {"validators": [vres("a"), vres("b", "unavailable", None,
                                                                  "no output")]},
                 "unavailable", 'validator "b" is unavailable: no output',
                 id="validators-any-unavailable-no-partial-mean"),
    pytest.param(SCOPED, {}, {"validators": [vres("a"), vres("b"), vres("c", "error", None)]},
                 "available", 1.0, id="validators-out-of-scope-error-ignored"),
    pytest.param(CORRECTNESS, {}, {"validators": []}, "unavailable", "no validators in scope",
                 id="validators-empty-scope"),
    # reliability
    pytest.param(RELIABILITY, RELIABILITY_METRICS,
                 {"metrics": [mres("ok", "run_completed_successfully", boolean=True),
                              mres("fails", "run_failure_count", numeric=0)]},
                 "available", 1.0, id="reliability-completed-no-failures"),
    pytest.param(RELIABILITY, RELIABILITY_METRICS,
                 {"metrics": [mres("ok", "run_completed_successfully", boolean=True),
                              mres("fails", "run_failure_count", numeric=2)]},
                 "available", 0.0, id="reliability-failures"),
    pytest.param(RELIABILITY, RELIABILITY_METRICS,
                 {"metrics": [mres("ok", "run_completed_successfully", boolean=False),
                              mres("fails", "run_failure_count", numeric=0)]},
                 "available", 0.0, id="reliability-run-failed"),
    pytest.param(RELIABILITY, RELIABILITY_METRICS,
                 {"metrics": [mres("ok", "run_completed_successfully", boolean=True)]},
                 "unavailable", None, id="reliability-missing-failure-count-metric"),
    pytest.param(RELIABILITY, RELIABILITY_METRICS,
                 {"metrics": [mres("ok", "run_completed_successfully", "unavailable",
                                   reason="no terminal event"),
                              mres("fails", "run_failure_count", numeric=0)]},
                 "unavailable", "completion metric is unavailable",
                 id="reliability-metric-unavailable"),
    # latency (1500 ms against target 1000, max 2000)
    pytest.param(LATENCY, {}, {"events": [START, DONE_1500]}, "available", 0.5,
                 id="latency-normalized-lower"),
    pytest.param(LATENCY, {}, {"events": [DONE_1500]}, "unavailable",
                 "latency evidence is unavailable", id="latency-no-start"),
    # cost ($1 input + $1 output = $2 against target 1, max 3)
    pytest.param(COST, PRICING, {"events": [MODEL_CALL]}, "available", 0.5,
                 id="cost-normalized-lower"),
    pytest.param(COST, {}, {"events": [MODEL_CALL]}, "unavailable",
                 "model pricing is unavailable", id="cost-no-pricing"),
    # metric
    pytest.param(M_LOWER, TOKENS, {"metrics": [mres("tokens", "run_total_tokens", numeric=200)]},
                 "available", 0.5, id="metric-lower"),
    pytest.param(M_HIGHER, TOKENS,
                 {"metrics": [mres("tokens", "run_total_tokens", numeric=250)]},
                 "available", 0.75, id="metric-higher-floor"),
    pytest.param(M_LOWER, TOKENS,
                 {"metrics": [mres("tokens", "run_total_tokens", boolean=True)]},
                 "unavailable", None, id="metric-boolean-unavailable"),
    pytest.param(M_LOWER, TOKENS,
                 {"metrics": [mres("tokens", "run_total_tokens", "unavailable",
                                   reason="no tokens recorded")]},
                 "unavailable", 'metric "tokens" is unavailable', id="metric-unavailable"),
    pytest.param(M_LOWER, TOKENS,
                 {"metrics": [mres("tokens", "run_total_tokens", "error", reason="bad")]},
                 "unavailable", 'metric "tokens" is unavailable', id="metric-error"),
    # behavioral (one error_cascade signal; no tool calls ⇒ 1)
    pytest.param(BEHAVIORAL, SIGNALS, {"events": [completed("x")]}, "available", 1.0,
                 id="behavioral-signals"),
    # llm_judge
    pytest.param(JUDGE, JUDGE_SPEC, {"judges": {"j": {"normalized_score": 0.8, "reason": ""}}},
                 "available", 0.8, id="llm_judge-score"),
    pytest.param(JUDGE, JUDGE_SPEC,
                 {"judges": {"j": {"normalized_score": None, "reason": "all calls failed"}}},
                 "unavailable", "all calls failed", id="llm_judge-null-score"),
    pytest.param(JUDGE, JUDGE_SPEC, {}, "unavailable", None, id="llm_judge-no-result"),
    # human_preference: used as-is
    pytest.param(HUMAN, {}, {"human": 0.37}, "available", 0.37, id="human-as-is"),
    pytest.param(HUMAN, {}, {}, "unavailable", "human preference evidence is unavailable",
                 id="human-absent"),
])
def test_dimension_source(dimension: dict[str, Any], extra: dict[str, Any],
                          kwargs: dict[str, Any], state: str, value: float | str | None) -> None:
    """Each source scores, or is unavailable/error with the reason of its first problem."""
    result = score(spec(dimension, **extra), **kwargs)
    assert result.state == state
    if state == "available":
        assert result.score == pytest.approx(value)
    else:
        assert result.score is None
        if value is not None:
            assert result.reason == value


def test_dimension_result_carries_direction() -> None:
    """A dimension result reports its better_direction (defaulted to higher for validators)."""
    assert score(spec(CORRECTNESS), validators=V_OK).better_direction == "higher"
