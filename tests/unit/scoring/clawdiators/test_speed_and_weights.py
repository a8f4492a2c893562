"""Speed formulas and the weight rule (docs/scoring.md §C2, §C1), with worked numbers."""

from __future__ import annotations

import pytest
from layer_helpers import layer_spec, run

from evalfleet.scoring import evaluate
from evalfleet.scoring.clawdiators.rules import weights_sum_to_one
from evalfleet.scoring.clawdiators.speed import legacy_linear, linear, power
from evalfleet.scoring.errors import SpecError
from evalfleet.scoring.run.scorecard import to_points
from evalfleet.scoring.spec.loading import load_spec


@pytest.mark.parametrize(("used", "limit", "points"), [
    (270, 300, 100),  # 90 % of the limit ⇒ speed 100
    (0, 0, 1000), (0, 300, 1000), (300, 300, 0), (500, 300, 0), (150, 300, 500),
])
def test_linear_time_decay(used: float, limit: float, points: int) -> None:
    """Formula A: 1000 × (1 − used/limit), clamped; (0, 0) gives 1000."""
    assert to_points(linear(used, limit)) == points


@pytest.mark.parametrize(("used", "points"), [(0, 1000), (300, 0), (500, 0), (150, 354),
                                              (30, 854)])
def test_power_curve_values_from_the_suite(used: float, points: int) -> None:
    """Formula C with limit 300: the values of the seed's test suite."""
    assert to_points(power(used, 300)) == points


def test_legacy_linear_rounds_points_and_has_no_lower_clamp() -> None:
    """Formula B: round(1000 × (1 − e/TL)); e = −10 s with TL 120 gives 1083."""
    assert to_points(legacy_linear(-10, 120)) == 1083
    assert to_points(legacy_linear(120, 120)) == 0
    assert to_points(legacy_linear(30, 120)) == 750


@pytest.mark.parametrize(("weights", "ok"), [
    ([0.333, 0.333, 0.333], True), ([0.501, 0.5], True), ([0.5, 0.499], False),
    ([0.33, 0.33, 0.33], False), ([0.5, 0.3], False), ([0.5, 0.5], True),
])
def test_weights_rule_float_examples(weights: list[float], ok: bool) -> None:
    """|Σw − 1| < 0.001, strict, summed left to right in doubles (§C1)."""
    assert weights_sum_to_one(weights) is ok


def test_weights_check_fails_the_load() -> None:
    """A pack declaring weights_sum_to_one with [0.5, 0.499] is rejected."""
    dims = [{"key": "correctness", "weight": 0.5},
            {"key": "speed", "source": "speed", "weight": 0.499, "speed": {"limit_ms": 1000}}]
    body = layer_spec(dims, {"weights_sum_to_one": True}).model_dump(by_alias=True)
    with pytest.raises(SpecError, match=r"Scoring dimension weights must sum to 1\.0"):
        load_spec(body)
    body["scorecard"]["dimensions"][1]["weight"] = 0.5
    assert load_spec(body).clawdiators is not None


def test_speed_dimension_at_90_percent_scores_100() -> None:
    """A run using 9 s of a 10 s limit scores 100 on speed."""
    spec = layer_spec([{"key": "speed", "source": "speed", "speed": {"limit_ms": 10_000}}])
    card = evaluate(spec, run(seconds=9.0))
    assert card.score_breakdown["speed"].score == 100


def test_speed_formula_is_selectable_and_gated_on_correctness() -> None:
    """``power`` at half the limit is 354; gated speed is 0 when correctness is 0."""
    dims = [{"key": "correctness"},
            {"key": "speed", "source": "speed",
             "speed": {"limit_ms": 10_000, "formula": "power", "gate_on": ["correctness"]}}]
    spec = layer_spec(dims)
    assert evaluate(spec, run("42", 5.0)).score_breakdown["speed"].score == 354
    wrong = evaluate(spec, run("41", 5.0))
    assert wrong.dimensions["speed"].score == 0.0
    assert "gated" in wrong.dimensions["speed"].reason


@pytest.mark.parametrize("formula", ["linear", "legacy_linear", "power"])
def test_a_negative_latency_scores_zero_never_past_1000(formula: str) -> None:
    """A run that ends before it starts (only a trajectory's own times can say so; the
    legacy formula made 10,001 of it and the run 1,000,274 points) scores 0 on speed."""
    events = run(seconds=10.0)
    events[-1]["payload"]["latency_ms"] = -3e9
    spec = layer_spec(["correctness", {"key": "speed", "source": "speed",
                                       "speed": {"limit_ms": 10_000, "formula": formula}}])
    card = evaluate(spec, events)
    assert card.dimensions["speed"].score == 0.0
    assert "negative" in card.dimensions["speed"].reason
    assert card.score is not None and 0 <= card.score <= 1000


def test_speed_limit_falls_back_to_the_constraint() -> None:
    """Without ``speed.limit_ms``, ``constraints.max_duration_ms`` is the limit."""
    spec = layer_spec(["correctness", {"key": "speed", "source": "speed"}],
                      {"constraints": {"max_duration_ms": 20_000}})
    assert evaluate(spec, run(seconds=10.0)).score_breakdown["speed"].score == 500


def test_layer_sources_need_the_block() -> None:
    """Without a ``clawdiators`` block, ``speed`` is an unknown source (AgentClash's rule)."""
    with pytest.raises(SpecError, match="source must be one of"):
        load_spec({"name": "x", "version_number": 1, "judge_mode": "deterministic",
                   "validators": [{"key": "a", "type": "exact_match", "target": "final_output",
                                   "expected_from": "literal:1"}],
                   "scorecard": {"dimensions": [{"key": "s", "source": "speed"}]}})
