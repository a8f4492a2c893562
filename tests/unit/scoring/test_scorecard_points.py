"""The 0–1000 layer of the scorecard (docs/scoring.md §16, Clawdiators' scale): points,
results, forfeits and refusals, gates, the breakdown, and the document's shape."""

from __future__ import annotations

import json
from typing import Any

import pytest
from helpers import completed
from scorecard_support import (
    BAD_METRIC,
    DONE,
    ONE_CASE,
    PREF,
    START,
    card,
    spec,
    spec_with,
    validator,
)

from evalfleet.scoring.run.scorecard import result_for, to_points


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
