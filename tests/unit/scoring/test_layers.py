"""The seam between the scoring core and a layer (docs/scoring.md §C, scoring/layers.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from helpers import T0, completed, spec_with
from pydantic import ValidationError

from evalfleet.scoring import evaluate, layer_sources, layers
from evalfleet.scoring.clawdiators.layer import LAYER
from evalfleet.scoring.layers import Additions, Adjusted, Layer
from evalfleet.scoring.record.events import Event
from evalfleet.scoring.record.evidence import Evidence
from evalfleet.scoring.run.collector import Collected, Context
from evalfleet.scoring.run.prerun import prerun_check
from evalfleet.scoring.run.records import DimensionResult
from evalfleet.scoring.run.source import Inputs
from evalfleet.scoring.spec.models import Dimension, EvaluationSpec
from evalfleet.scoring.spec.rules import validate_spec

VALIDATOR = {"key": "v", "type": "exact_match", "target": "final_output",
             "expected_from": "literal:42"}


def _toy_source(dimension: Dimension, given: Inputs) -> DimensionResult:
    reading = given.readings["toy"]
    return DimensionResult(key=dimension.key, state="available", score=float(str(reading)),
                           better_direction=dimension.better_direction)


def _toy_collector(ctx: Context) -> Collected:
    return Collected("available", numeric=7.0)


def _adjust(spec: EvaluationSpec, evidence: Evidence, reading: object,
            dimensions: list[DimensionResult]) -> Adjusted:
    return Adjusted(dimensions, Additions(harness_warning=f"toy read {reading}"))


def _read(events: list[Event]) -> object:
    return 0.5


TOY = Layer(name="toy", opted_in=lambda spec: spec.name == "toy", sources={"toy": _toy_source},
            collectors={"toy_count": _toy_collector}, rules=lambda spec, out: None,
            read=_read, adjust=_adjust, checks_before_run=lambda spec: spec.name == "toy",
            prerun=lambda spec, evidence, reading: "toy says stop")


@pytest.fixture
def toy_layer(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The toy layer registered beside the Clawdiators layer, for one test."""
    monkeypatch.setattr(layers, "_LAYERS", list(layers.registered()))
    monkeypatch.setattr(layer_sources, "_BY_LAYER", dict(layer_sources._BY_LAYER))
    layers.register(TOY)
    yield


def _spec(name: str, **extra: Any) -> EvaluationSpec:
    dimensions = [{"key": "t", "source": "toy", "weight": 1}, "correctness"]
    return spec_with(VALIDATOR, name=name, scorecard={"dimensions": dimensions}, **extra)


def test_the_clawdiators_layer_is_registered_by_importing_scoring() -> None:
    """Any use of ``scoring`` sees the Clawdiators layer, registered by the layer itself."""
    assert layers.registered() == (LAYER,)


@pytest.mark.usefixtures("toy_layer")
def test_a_layer_source_is_valid_only_in_a_spec_that_opts_in() -> None:
    """Given a registered layer, its source is valid (and "higher" by default) only in a spec
    that opts in; elsewhere it is an unknown source, as in AgentClash."""
    opted, other = _spec("toy"), _spec("plain")

    assert validate_spec(opted) == []
    assert opted.scorecard.dimensions[0].better_direction == "higher"
    assert [
        f.field for f in validate_spec(other)] == ["evaluation_spec.scorecard.dimensions[0].source"]


@pytest.mark.usefixtures("toy_layer")
def test_a_layer_scores_its_sources_from_its_reading_and_fills_its_fields() -> None:
    """The core hands the layer's reading to its source and collector, and takes the
    scorecard fields its adjustment fills."""
    metric = {"key": "m", "type": "numeric", "collector": "toy_count"}
    card = evaluate(_spec("toy", metrics=[metric]), [completed("42")])

    assert card.dimensions["t"].score == 0.5
    assert card.metric_details[0].numeric_value == 7.0
    assert card.harness_warning == "toy read 0.5"


@pytest.mark.usefixtures("toy_layer")
def test_the_pre_run_check_asks_only_the_layers_a_spec_opts_into() -> None:
    """The layer that asks stops the run; for any other spec the events are not even read."""
    undecodable = [{"type": "system.run.started", "occurred_at": "not a time"}]

    assert prerun_check(_spec("toy"), [completed("42")]) == "toy says stop"
    assert prerun_check(spec_with(VALIDATOR, name="plain"), undecodable) is None
    with pytest.raises(ValidationError):
        prerun_check(_spec("toy"), undecodable)


def test_a_collector_of_a_layer_is_unknown_to_a_spec_that_does_not_opt_in() -> None:
    """``run_model_call_count`` is the Clawdiators layer's: without its block, an error."""
    metric = {"key": "m", "type": "numeric", "collector": "run_model_call_count"}
    card = evaluate(spec_with(VALIDATOR, metrics=[metric]),
                    [{"type": "system.run.started", "occurred_at": T0}, completed("42")])

    assert card.metric_details[0].state == "error"
