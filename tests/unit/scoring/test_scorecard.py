"""Status, validity, warnings (docs/scoring.md §13), the scorecard document (§16) and the 0–1000
layer."""

from __future__ import annotations

import json
from typing import Any

import pytest
from helpers import T0, completed

from evalfleet import scoring
from evalfleet.scoring.run.engine import status, validity
from evalfleet.scoring.run.records import DimensionResult, MetricResult, ValidatorResult
from evalfleet.scoring.run.scorecard import Scorecard, result_for, to_points

START = {"type": "system.run.started", "occurred_at": T0, "payload": {}}
DONE = {"type": "system.run.completed", "occurred_at": "2026-01-01T00:00:01Z",
        "payload": {"final_output": "x"}}
ONE_CASE = [{"challenge_key": "c", "case_key": "k", "payload": {"q": "?"}}]


def validator(key: str, expected: str = "x", vtype: str = "exact_match") -> dict[str, Any]:
    """A validator on the final output against ``literal:<expected>``."""
    return {"key": key, "type": vtype, "target": "final_output",
            "expected_from": "literal:" + expected}


def spec(*dimensions: Any, validators: list[dict[str, Any]] | None = None,
         **scorecard: Any) -> scoring.EvaluationSpec:
    """A valid spec with the given dimensions (validator ``a`` by default)."""
    return scoring.load_spec({
        "name": "t", "version_number": 1, "judge_mode": "deterministic",
        "validators": validators or [validator("a")],
        "scorecard": {"dimensions": list(dimensions), **scorecard}})


def spec_with(body: dict[str, Any], *dimensions: Any, **scorecard: Any) -> scoring.EvaluationSpec:
    """A valid spec: the base body updated with ``body``, then the dimensions."""
    base: dict[str, Any] = {"name": "t", "version_number": 1, "judge_mode": "deterministic",
                            "validators": [validator("a")]}
    base.update(body)
    base["scorecard"] = {"dimensions": list(dimensions), **scorecard}
    return scoring.load_spec(base)


PREF = {"key": "pref", "source": "human_preference"}
LATENCY = {"key": "latency", "source": "latency", "better_direction": "lower",
           "normalization": {"target": 500, "max": 1500}}
BAD_METRIC = {"metrics": [{"key": "m", "type": "numeric", "collector": "nope"}]}
LATENCY_METRIC = {"metrics": [{"key": "lat", "type": "numeric",
                               "collector": "run_total_latency_ms"}]}


def card(the_spec: scoring.EvaluationSpec, events: list[dict[str, Any]] | None = None,
         cases: list[dict[str, Any]] | None = None, **kwargs: Any) -> Scorecard:
    """Evaluate ``the_spec`` on ``events`` (default: one completed run with output ``x``)."""
    return scoring.evaluate(the_spec, events if events is not None else [completed("x")],
                            cases, **kwargs)


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


@pytest.mark.parametrize(("score", "points"), [
    pytest.param(0.0, 0, id="zero"),
    pytest.param(1.0, 1000, id="one"),
    pytest.param(0.6995, 700, id="699.5-rounds-up"),
    pytest.param(0.3995, 400, id="399.5-rounds-up"),
    pytest.param(0.6345, 635, id="634.5-half-up-not-even"),
    pytest.param(0.0005, 1, id="0.5-rounds-up"),
    pytest.param(0.00049, 0, id="below-half-down"),
    pytest.param(2 / 3, 667, id="two-thirds"),
])
def test_to_points(score: float, points: int) -> None:
    """A 0–1 score becomes 0–1000 points rounded half up on its decimal value."""
    assert to_points(score) == points


@pytest.mark.parametrize(("points", "validity_state", "expected"), [
    pytest.param(1000, "valid", "win", id="max-win"),
    pytest.param(700, "valid", "win", id="700-win"),
    pytest.param(699, "degraded", "draw", id="699-draw"),
    pytest.param(400, "valid", "draw", id="400-draw"),
    pytest.param(399, "valid", "loss", id="399-loss"),
    pytest.param(0, "valid", "loss", id="zero-loss"),
    pytest.param(None, "valid", None, id="no-score"),
    pytest.param(900, "invalid", None, id="invalid-no-contest"),
])
def test_result_for(points: int | None, validity_state: str, expected: str | None) -> None:
    """win at ≥700, draw at ≥400, else loss; null with no score or an invalid evaluation."""
    assert result_for(points, validity_state) == expected


@pytest.mark.parametrize("points", [None, 0, 900])
def test_result_for_a_forfeit_is_a_loss(points: int | None) -> None:
    """A run the candidate's own answer made invalid loses, whatever its score."""
    assert result_for(points, "invalid", forfeit=True) == "loss"


@pytest.mark.parametrize(("preference", "score", "result"), [
    pytest.param(0.6995, 700, "win", id="699.5-win"),
    pytest.param(0.6994, 699, "draw", id="699.4-draw"),
    pytest.param(0.3995, 400, "draw", id="399.5-draw"),
    pytest.param(0.3994, 399, "loss", id="399.4-loss"),
    pytest.param(0.6345, 635, "draw", id="634.5-half-up"),
    pytest.param(None, None, None, id="overall-null-score-null"),
])
def test_clawdiators_score_through_evaluate(preference: float | None, score: int | None,
                                            result: str | None) -> None:
    """score = overall × 1000 rounded half up (null with no overall); result from score."""
    got = card(spec(PREF), human_preference=preference)
    assert (got.score, got.result) == (score, result)
    if preference is None:
        assert got.overall_score is None and got.passed is None


def test_invalid_evaluation_has_score_but_no_result() -> None:
    """An invalid evaluation keeps its score but its result is null (no contest)."""
    got = card(spec_with(BAD_METRIC, PREF), human_preference=0.9)
    assert (got.validity, got.score, got.result) == ("invalid", 900, None)


JSON_SHAPE = {"key": "shape", "type": "json_schema", "target": "final_output",
              "expected_from": 'literal:{"type": "object"}'}
SHAPE = {"key": "shape", "source": "validators", "validators": ["shape"], "gate": True,
         "pass_threshold": 1.0}


@pytest.mark.parametrize("strategy", ["weighted", "binary", "hybrid"])
def test_an_unreadable_answer_is_a_loss_not_no_contest(strategy: str) -> None:
    """Garbage where the pack asks for JSON: AgentClash's fields say invalid (an
    evaluator_error), but the candidate did it: score 0, a loss — never no contest."""
    pref = dict(PREF, pass_threshold=0.5)
    the_spec = spec(SHAPE, pref, validators=[JSON_SHAPE], strategy=strategy)
    got = card(the_spec, [completed("garbage")], human_preference=1.0)
    assert got.validity == "invalid" and "parse actual JSON" in got.validity_reason
    assert (got.score, got.result) == (0, "loss")


def test_an_unreadable_answer_with_a_pack_error_stays_no_contest() -> None:
    """When the pack errs as well (a metric that cannot be collected), nobody loses."""
    the_spec = spec_with({**BAD_METRIC, "validators": [JSON_SHAPE]}, SHAPE, PREF)
    got = card(the_spec, [completed("garbage")], human_preference=1.0)
    assert (got.validity, got.result) == ("invalid", None)


REASON = "the sandbox cannot hold the submission's file `a`: a name over 255 bytes"


def refused(**payload: Any) -> dict[str, Any]:
    """The worker's ``grader.submission.refused`` event."""
    return {"type": "grader.submission.refused", "occurred_at": "2026-01-01T00:00:02Z",
            "payload": payload}


def test_a_submission_the_sandbox_could_not_hold_loses() -> None:
    """Whatever the rest of the evidence says (here: a winning answer), the run is the
    candidate's loss, with the reason; AgentClash's other fields are left as computed."""
    the_spec = spec("correctness")
    winning = card(the_spec)
    got = card(the_spec, [completed("x"), refused(path="a", reason=REASON)])
    assert (winning.score, winning.result, winning.passed) == (1000, "win", True)
    assert (got.score, got.result, got.passed, got.overall_reason) == (0, "loss", False,
                                                                       REASON)
    assert (got.overall_score, got.dimensions, got.validity) == (
        winning.overall_score, winning.dimensions, winning.validity)


def test_a_refused_submission_loses_next_to_a_pack_error_too() -> None:
    """No contest needs the pack's fault alone; a submission the sandbox could not hold
    never ran, and loses even where every run of the pack would be no contest."""
    got = card(spec_with(BAD_METRIC, PREF), [completed("x"), refused(reason=REASON)],
               human_preference=0.9)
    assert (got.validity, got.score, got.result) == ("invalid", 0, "loss")


@pytest.mark.parametrize("payload", [{}, {"reason": 7}, {"reason": "  "}])
def test_a_refusal_without_a_reason_still_loses(payload: dict[str, Any]) -> None:
    got = card(spec("correctness"), [completed("x"), refused(**payload)])
    assert (got.result, got.overall_reason) == (
        "loss", "the sandbox could not hold the submission's files")


def test_weighted_gate_failure_lowers_passed_not_result() -> None:
    """Under weighted a failed gate sets passed=false but the result follows the score."""
    gate = {"key": "correctness", "source": "validators", "gate": True, "pass_threshold": 1.0}
    got = card(spec(gate, PREF), [completed("wrong")], human_preference=1.0)
    assert (got.passed, got.overall_score, got.score, got.result) == (False, 0.5, 500, "draw")


def test_hybrid_gate_failure_zeroes_score() -> None:
    """Under hybrid a failed gate zeroes the score, so the result is a loss."""
    gate = {"key": "correctness", "source": "validators", "gate": True, "pass_threshold": 1.0}
    got = card(spec(gate, PREF, strategy="hybrid"), [completed("wrong")], human_preference=1.0)
    assert (got.passed, got.score, got.result) == (False, 0, "loss")


def test_breakdown_weighted_adds_up() -> None:
    """Breakdown weights are normalized over available dims and weighted values sum to score."""
    the_spec = spec({"key": "correctness", "source": "validators", "weight": 3},
                    dict(PREF, weight=1), {"key": "other", "source": "human_preference",
                                           "weight": 0},
                    validators=[validator("a"), validator("b", "y")])
    got = card(the_spec, human_preference=0.6345)
    breakdown = got.score_breakdown
    assert set(breakdown) == {"correctness", "pref", "other"}
    assert breakdown["correctness"].score == 500
    assert breakdown["pref"].score == 635
    assert breakdown["correctness"].weight == pytest.approx(0.75)
    assert breakdown["other"].weight == 0.0
    assert sum(e.weight for e in breakdown.values()) == pytest.approx(1.0)
    total = sum(e.weighted for e in breakdown.values())
    assert total == pytest.approx(500 * 0.75 + 635 * 0.25)
    assert got.score is not None and abs(total - got.score) <= 1


def test_breakdown_only_available_dimensions() -> None:
    """Unavailable dimensions are left out of the breakdown and out of the weight sum."""
    got = card(spec(dict(PREF, weight=2), {"key": "correctness", "source": "validators",
                                            "weight": 1}), [completed("x")])
    assert set(got.score_breakdown) == {"correctness"}
    assert got.score_breakdown["correctness"].weight == 1.0
    assert got.score_breakdown["correctness"].weighted == 1000.0


def test_breakdown_informational_under_hybrid() -> None:
    """Under hybrid the breakdown still lists every available dimension, gates included."""
    gate = {"key": "correctness", "source": "validators", "gate": True, "pass_threshold": 0.5}
    got = card(spec(gate, PREF, strategy="hybrid"), human_preference=0.4)
    assert got.score == 400
    assert {k: e.score for k, e in got.score_breakdown.items()} == {"correctness": 1000,
                                                                     "pref": 400}
    assert sum(e.weight for e in got.score_breakdown.values()) == pytest.approx(1.0)


def test_json_document_shape() -> None:
    """The JSON form carries the persisted AgentClash fields, ``pass`` and the 0–1000 layer."""
    doc = json.loads(card(spec("correctness", validators=[validator("a"), validator("b", "y")]),
                          [START, DONE], ONE_CASE).to_json())
    for field in ("status", "strategy", "overall_score", "passed", "overall_reason", "validity",
                  "validity_reason", "warnings", "dimensions", "validator_summary",
                  "validator_details", "metric_summary", "metric_details", "score", "result",
                  "score_breakdown"):
        assert field in doc
    assert doc["validator_summary"] == {"total": 2, "available": 2, "unavailable": 0,
                                        "error": 0, "pass": 1, "fail": 1}
    assert doc["metric_summary"] == {"total": 0, "available": 0, "unavailable": 0, "error": 0}
    assert doc["dimensions"]["correctness"] == {"state": "available", "score": 0.5,
                                                "reason": "", "better_direction": "higher"}
    assert [d["verdict"] for d in doc["validator_details"]] == ["pass", "fail"]
    assert (doc["score"], doc["result"]) == (500, "draw")
    assert doc["score_breakdown"] == {"correctness": {"score": 500, "weight": 1.0,
                                                      "weighted": 500.0}}
