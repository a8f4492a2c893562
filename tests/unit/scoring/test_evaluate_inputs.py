"""evaluate() refuses what it cannot score: an invalid spec, undecodable inputs, and a
human preference outside [0, 1] are errors naming every field, never a half-made card."""

from __future__ import annotations

from typing import Any

import pytest
from helpers import completed

from evalfleet import scoring
from evalfleet.scoring import FieldError, InputError, SpecError

SPEC = scoring.load_spec({
    "name": "t", "version_number": 1, "judge_mode": "deterministic",
    "validators": [{"key": "a", "type": "exact_match", "target": "final_output",
                    "expected_from": "literal:x"}],
    "scorecard": {"dimensions": ["correctness", {"key": "hp", "source": "human_preference"}]}})


def test_an_invalid_spec_is_rejected_before_scoring() -> None:
    """A spec changed after loading is validated again, as AgentClash's engine does."""
    broken = SPEC.model_copy(update={"validators": []})

    with pytest.raises(SpecError) as raised:
        scoring.evaluate(broken, [completed("x")])
    assert not isinstance(raised.value, InputError)
    assert raised.value.errors == [
        FieldError("evaluation_spec.validators", "must contain at least one validator")]


def test_every_undecodable_event_and_case_is_listed_with_its_path() -> None:
    """Each problem names its event or case index and field."""
    events = [completed("x"), {"type": 3, "occurred_at": "2026-01-01T00:00:00Z", "payload": []}]

    with pytest.raises(InputError) as raised:
        scoring.evaluate(SPEC, events, [{"challenge_key": "c", "case_key": 5}])
    assert [e.field for e in raised.value.errors] == [
        "events[1].type", "events[1].payload", "cases[0].case_key"]


@pytest.mark.parametrize("preference", [float("nan"), float("inf"), -float("inf"), -0.01,
                                        1.5, True, "0.5"])
def test_human_preference_must_be_a_number_in_the_unit_interval(preference: Any) -> None:
    """AgentClash would score 1.5 as 1.5 points of 1; a non-finite value has no score."""
    with pytest.raises(InputError) as raised:
        scoring.evaluate(SPEC, [completed("x")], human_preference=preference)
    assert raised.value.errors == [
        FieldError("human_preference", "must be a number between 0 and 1")]


@pytest.mark.parametrize("preference", [0, 0.0, 0.5, 1, 1.0])
def test_human_preference_in_range_scores(preference: float) -> None:
    """The bounds are included; the dimension scores the value given."""
    card = scoring.evaluate(SPEC, [completed("x")], human_preference=preference)

    assert card.dimensions["hp"].score == preference
