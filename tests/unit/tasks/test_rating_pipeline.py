"""The rating facts through the pipeline and on the wire: a scored run's result states
them, verified from the submission's trajectory; the request's fields are optional and
strict (docs/scoring.md §C9)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from click.testing import CliRunner
from pipeline_support import PACK, request, run

from evalfleet.scoring import load_pack
from evalfleet.tasks.evaluation.rescoring import rescore
from evalfleet.tasks.messages import RunRequest
from evalfleet.workers.cli import main


def trajectory(call_at: str = "2026-01-01T00:00:01Z") -> list[dict[str, Any]]:
    """The agent's story: started, one model call at ``call_at``, completed saying 42."""
    return [{"type": "system.run.started", "sequence_number": 1,
             "occurred_at": "2026-01-01T00:00:00Z", "payload": {}},
            {"type": "model.call.completed", "sequence_number": 2, "occurred_at": call_at,
             "payload": {"provider_key": "openai", "provider_model_id": "gpt-4o",
                         "usage": {"input_tokens": 10, "output_tokens": 5}}},
            {"type": "system.run.completed", "sequence_number": 3,
             "occurred_at": "2026-01-01T00:00:02Z", "payload": {"final_output": "42"}}]


def rated_run(events: list[dict[str, Any]] | None, **fields: Any) -> Any:
    """The winning submission, with ``events`` (if any) and the request's ``fields``."""
    submission: dict[str, Any] = {"files": {"answer.txt": "42"},
                                  "commands": [{"run": "echo 42"}]}
    if events is not None:
        submission["events"] = events
    result, _ = run(request(submission=submission, **fields))
    assert result.outcome == "scored"
    return result


def test_a_verified_first_memoryless_attempt_is_benchmark_grade() -> None:
    """A trajectory within the run's window is verified, on a pack without the
    Clawdiators layer too: a verified first attempt gives 1.2, and memoryless makes it
    benchmark-grade."""
    result = rated_run(trajectory(), attempt_number=1, memoryless=True)

    rating = result.rating
    assert (rating.category, rating.elo_score, rating.rating_change) == ("win", 1.0, True)
    assert (rating.verified, rating.attempt_number, rating.memoryless) == (True, 1, True)
    assert (rating.benchmark_grade, rating.multiplier) == (True, 1.2)


def test_a_verified_later_attempt_gets_the_smaller_bonus() -> None:
    """Attempt 3, verified: 1.1, not benchmark-grade."""
    rating = rated_run(trajectory(), attempt_number=3, memoryless=True).rating

    assert (rating.verified, rating.benchmark_grade, rating.multiplier) == (True, False, 1.1)


@pytest.mark.parametrize("events", [None, trajectory("2026-01-01T00:00:30Z")],
                         ids=["no-trajectory", "step-outside-the-window"])
def test_without_a_verified_trajectory_there_is_no_bonus(
        events: list[dict[str, Any]] | None) -> None:
    """No agent events (the worker's own are no trajectory), or a step 28 s after the run
    ended: not verified, no multiplier, not benchmark-grade."""
    rating = rated_run(events, attempt_number=1, memoryless=True).rating

    assert (rating.category, rating.verified) == ("win", False)
    assert (rating.benchmark_grade, rating.multiplier) == (False, None)


def test_a_request_that_says_nothing_gets_the_facts_it_can() -> None:
    """No attempt, no memoryless: echoed as None; verified, but no multiplier and
    benchmark grade unknown."""
    rating = rated_run(trajectory()).rating

    assert (rating.attempt_number, rating.memoryless) == (None, None)
    assert (rating.verified, rating.benchmark_grade, rating.multiplier) == (True, None, None)


def test_a_rejected_request_has_no_rating() -> None:
    """Nothing was scored: no rating."""
    result, _ = run(request(attempt_number=1, colour="red"))

    assert (result.outcome, result.rating) == ("rejected", None)


def test_a_rescored_result_moves_its_rating_with_its_result() -> None:
    """``evalfleet rescore``: a stored loss that scores a win today is rated a win, the
    request's facts kept."""
    today = rated_run(trajectory(), attempt_number=2, memoryless=False)
    stored = today.model_copy(update={"rating": today.rating.model_copy(
        update={"category": "loss", "elo_score": 0.0})})

    again = rescore(stored, load_pack(PACK)).result

    assert again is not None and again.rating == today.rating


def test_a_request_without_the_new_fields_still_validates() -> None:
    """``attempt_number`` and ``memoryless`` are optional (None); unknown fields are still
    refused."""
    plain = RunRequest.model_validate({"run_id": "r", "pack_ref": "p"})

    assert (plain.attempt_number, plain.memoryless) == (None, None)
    with pytest.raises(ValueError, match="attempt"):
        RunRequest.model_validate({"run_id": "r", "pack_ref": "p", "attempt": 1})


@pytest.mark.parametrize(("field", "value"), [
    ("attempt_number", 0), ("attempt_number", -1), ("attempt_number", "first"),
    ("memoryless", "maybe")])
def test_a_bad_rating_field_is_rejected_naming_it(field: str, value: Any) -> None:
    """The attempt is 1 or more; memoryless a boolean: anything else is a rejection."""
    result, _ = run(request(**{field: value}))

    assert result.outcome == "rejected"
    assert [e.field for e in result.errors] == [f"request.{field}"]


def test_the_schemas_carry_the_new_fields() -> None:
    """``evalfleet schema request`` has both fields; ``schema result`` has the rating."""
    request_schema = json.loads(CliRunner().invoke(main, ["schema", "request"]).stdout)
    result_schema = json.loads(CliRunner().invoke(main, ["schema", "result"]).stdout)

    assert {"attempt_number", "memoryless"} <= set(request_schema["properties"])
    assert request_schema["additionalProperties"] is False
    assert "rating" in result_schema["properties"]
    assert set(result_schema["$defs"]["Rating"]["properties"]) == {
        "category", "elo_score", "rating_change", "verified", "attempt_number",
        "memoryless", "benchmark_grade", "multiplier"}
