"""Status, validity, warnings (docs/scoring.md §13), the scorecard document (§16) and the 0–1000
layer."""

from __future__ import annotations

from typing import Any

import pytest
from helpers import T0, completed
from scorecard_support import (
    BAD_METRIC,
    LATENCY,
    LATENCY_METRIC,
    ONE_CASE,
    PREF,
    card,
    spec,
    spec_with,
    validator,
)

from evalfleet import scoring
from evalfleet.scoring.run.engine import status, validity
from evalfleet.scoring.run.records import DimensionResult, MetricResult, ValidatorResult


def dres(state: str, score: float | None = None, key: str = "d") -> DimensionResult:
    """A dimension result."""
    return DimensionResult(key=key, state=state, score=score)


@pytest.mark.parametrize(("dimensions", "expected"), [
    pytest.param([dres("available", 1.0), dres("available", 0.0)], "complete", id="all-available"),
    pytest.param([dres("available", 1.0), dres("unavailable")], "partial", id="one-unavailable"),
    pytest.param([dres("available", 1.0), dres("error")], "partial", id="one-error"),
    pytest.param([dres("unavailable"), dres("unavailable")], "partial", id="no-score"),
    pytest.param([dres("available", None)], "partial", id="available-without-score"),
    pytest.param([], "partial", id="no-dimensions"),
])
def test_status(dimensions: list[DimensionResult], expected: str) -> None:
    """status is complete only when every dimension is available with a score."""
    assert status(dimensions) == expected


@pytest.mark.parametrize(("the_spec", "events", "kwargs", "expected"), [
    pytest.param(spec("correctness"), None, {}, "complete", id="complete"),
    pytest.param(spec("correctness", PREF), None, {}, "partial", id="partial-one-unavailable"),
    pytest.param(spec(PREF), None, {}, "partial", id="partial-no-score"),
])
def test_status_through_evaluate(the_spec: scoring.EvaluationSpec,
                                 events: list[dict[str, Any]] | None,
                                 kwargs: dict[str, Any], expected: str) -> None:
    """evaluate reports complete/partial status (never failed)."""
    assert card(the_spec, events, **kwargs).status == expected


def vres(state: str, key: str = "v") -> ValidatorResult:
    """A validator result in ``state``."""
    return ValidatorResult(key=key, type="exact_match", state=state,
                           outcome_class=state, reason="r")


def mres(state: str, key: str = "m") -> MetricResult:
    """A metric result in ``state``."""
    return MetricResult(key=key, type="numeric", collector="c",
                        state=state, reason="r")


OKD = dres("available", 1.0)


@pytest.mark.parametrize(("validators", "metrics", "dimensions", "expected", "names"), [
    pytest.param([vres("available")], [mres("available")], [OKD], "valid", None, id="valid"),
    pytest.param([vres("available"), vres("error", "v2")], [mres("error")], [dres("error")],
                 "invalid", '"v2"', id="invalid-validator-named-first"),
    pytest.param([vres("unavailable")], [mres("error", "m1")], [dres("error", key="d1")],
                 "invalid", '"m1"', id="invalid-metric-before-dimension"),
    pytest.param([vres("unavailable")], [mres("unavailable")], [dres("error", key="d1")],
                 "invalid", '"d1"', id="invalid-dimension-beats-unavailable"),
    pytest.param([vres("unavailable", "v1")], [mres("unavailable", "m1")],
                 [OKD, dres("unavailable", key="d1")],
                 "degraded", '"d1"', id="degraded-dimension-first"),
    pytest.param([vres("unavailable", "v1")], [mres("unavailable", "m1")], [OKD],
                 "degraded", '"v1"', id="degraded-validator-before-metric"),
    pytest.param([vres("available")], [mres("unavailable", "m1")], [OKD],
                 "degraded", '"m1"', id="degraded-metric"),
])
def test_validity(validators: list[ValidatorResult], metrics: list[MetricResult],
                  dimensions: list[DimensionResult], expected: str, names: str | None) -> None:
    """invalid on any error (validators, metrics, dimensions); else degraded; else valid."""
    got, reason = validity(validators, metrics, dimensions)
    assert got == expected
    assert (reason == "") if names is None else (names in reason)


@pytest.mark.parametrize(("the_spec", "events", "expected"), [
    pytest.param(spec("correctness"), None, "valid", id="valid"),
    pytest.param(spec("correctness", validators=[validator("a", "(", "regex_match")]), None,
                 "invalid", id="invalid-validator-error"),
    pytest.param(spec_with(BAD_METRIC, "correctness"), None, "invalid",
                 id="invalid-unknown-collector"),
    pytest.param(spec("correctness", PREF), None, "degraded", id="degraded-dimension"),
    pytest.param(spec({"key": "c", "source": "validators", "validators": ["a"]},
                      validators=[validator("a"), {"key": "b", "type": "exact_match",
                                                   "target": "case.payload",
                                                   "expected_from": "literal:x"}]),
                 None, "degraded", id="degraded-validator"),
    pytest.param(spec_with(LATENCY_METRIC, "correctness"), None, "degraded",
                 id="degraded-metric"),
])
def test_validity_through_evaluate(the_spec: scoring.EvaluationSpec,
                                   events: list[dict[str, Any]] | None, expected: str) -> None:
    """evaluate derives validity from validator, metric and dimension states."""
    assert card(the_spec, events).validity == expected


@pytest.mark.parametrize(("the_spec", "events", "cases", "expected"), [
    pytest.param(spec("correctness"), [completed("x")], None,
                 ["challenge input set is unavailable"], id="no-case-warns-even-unused"),
    pytest.param(spec("correctness"), [completed("x")], ONE_CASE, [], id="one-case-no-warning"),
    pytest.param(spec("correctness"), [completed("x")], ONE_CASE * 2,
                 ["challenge input is ambiguous across multiple items"], id="two-cases"),
    pytest.param(spec("correctness"), [completed("x")],
                 [{"challenge_key": "c", "case_key": "k", "payload": {}}],
                 [], id="empty-object-payload-no-warning"),
    pytest.param(spec("correctness"), [completed("x")],
                 [{"challenge_key": "c", "case_key": "k"}],
                 ["challenge input payload is empty"], id="no-payload-bytes"),
    pytest.param(spec("correctness"), [], ONE_CASE,
                 ["final output evidence is unavailable", "terminal run evidence is unavailable"],
                 id="evidence-warnings-sorted"),
    pytest.param(spec(LATENCY, dict(LATENCY, key="latency2")), [completed("x")], ONE_CASE,
                 ["latency evidence is unavailable"], id="dimension-reason-deduplicated"),
    pytest.param(spec("correctness", validators=[validator("a")]), [], None,
                 ["challenge input set is unavailable", "final output evidence is unavailable",
                  "terminal run evidence is unavailable"],
                 id="validators-dimension-reason-not-warned"),
    pytest.param(spec(PREF, "reliability"), [completed("x")], ONE_CASE, [],
                 id="human-preference-and-reliability-not-warned"),
])
def test_warnings(the_spec: scoring.EvaluationSpec, events: list[dict[str, Any]],
                  cases: list[dict[str, Any]] | None, expected: list[str]) -> None:
    """Warnings: evidence warnings plus unavailable latency/cost/behavioral/metric/judge reasons."""
    assert card(the_spec, events, cases).warnings == expected


def test_warnings_include_cost_and_metric_reasons() -> None:
    """Unavailable cost and metric dimensions contribute their own reasons (AgentClash's texts)."""
    the_spec = spec_with(LATENCY_METRIC,
                         {"key": "cost", "source": "cost", "better_direction": "lower",
                          "normalization": {"target": 1, "max": 2}},
                         {"key": "m", "source": "metric", "metric": "lat",
                          "better_direction": "lower", "normalization": {"target": 1, "max": 2}})
    got = card(the_spec, [completed("x")], ONE_CASE)
    assert got.metric_details[0].reason == "latency evidence is unavailable"
    assert got.warnings == ['metric "lat" is unavailable', "model pricing is unavailable"]


def test_warnings_include_llm_judge_and_behavioral_reasons() -> None:
    """Unavailable llm_judge and behavioral dimensions contribute their reasons, sorted."""
    the_spec = scoring.load_spec({
        "name": "t", "version_number": 1, "judge_mode": "hybrid",
        "validators": [{"key": "a", "type": "contains", "target": "file:out",
                        "expected_from": "literal:x"}],
        "llm_judges": [{"key": "j", "mode": "rubric", "rubric": "r", "model": "gpt-4o"}],
        "behavioral": {"signals": [{"key": "recovery_behavior", "weight": 1}]},
        "scorecard": {"dimensions": [
            {"key": "q", "source": "llm_judge", "judge_key": "j"},
            {"key": "b", "source": "behavioral"}]}})
    turns = [{"type": "turn.completed", "occurred_at": T0,
              "payload": {"turn_index": 0, "mismatch": True}}]
    got = card(the_spec, [completed("y"), *turns], ONE_CASE,
               judge_results={"j": {"normalized_score": None, "reason": "zzz judge failed"}})
    assert got.warnings == sorted(got.warnings)
    assert got.warnings[-1] == "zzz judge failed"
    behavioral = got.dimensions["b"]
    assert behavioral.state == "unavailable"
    assert behavioral.reason in got.warnings
