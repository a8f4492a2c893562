"""Builders for the scorecard's tests (test_scorecard.py, test_scorecard_points.py): events,
specs with validators and dimensions, and a scorecard evaluated from them."""

from __future__ import annotations

from typing import Any

from helpers import T0, completed

from evalfleet import scoring
from evalfleet.scoring.run.scorecard import Scorecard

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
