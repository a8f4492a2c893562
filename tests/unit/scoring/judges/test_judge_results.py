"""Judge results rebuilt from ``grader.judge.*`` events through ``evaluate`` (docs/scoring.md §13,
§14, §16)."""

from __future__ import annotations

from typing import Any

import scoring
from scoring.judges import CALL_COMPLETED, CALL_SKIPPED

SPEC = {
    "name": "s", "version_number": 1, "judge_mode": "hybrid",
    "validators": [{"key": "v", "type": "contains", "target": "final_output",
                    "expected_from": "literal:ok"}],
    "llm_judges": [
        {"key": "tone", "mode": "rubric", "rubric": "r", "models": ["gpt-4o", "claude-x"],
         "consensus": {"aggregation": "mean"}, "samples": 2, "context_from": ["final_output"]},
        {"key": "apology", "mode": "assertion", "assertion": "a", "model": "gpt-4o",
         "samples": 1, "context_from": ["final_output"]}],
    "scorecard": {"dimensions": [
        "correctness", {"key": "tone", "source": "llm_judge", "judge_key": "tone"},
        {"key": "apology", "source": "llm_judge", "judge_key": "apology"}]}}
DONE = {"type": "system.run.completed", "occurred_at": "2026-01-01T00:00:00Z",
        "payload": {"final_output": "ok, sorry"}}


def call(key: str, model: str, sample: int, text: str = "", error: str = "",
         skipped: bool = False) -> dict[str, Any]:
    payload = {"judge_key": key, "model": model, "provider_key": "p", "sample_index": sample,
               "response_text": text, "error": error}
    return {"type": CALL_SKIPPED if skipped else CALL_COMPLETED, "payload": payload}


def evaluate(*calls: dict[str, Any]) -> scoring.Scorecard:
    return scoring.evaluate(scoring.load_spec(SPEC), [DONE, *calls])


def test_scores_rebuild_from_recorded_calls() -> None:
    """Per-model median, cross-model mean, variance, confidence, details sorted by key."""
    card = evaluate(call("tone", "gpt-4o", 1, '{"score": 5}'),
                    call("tone", "gpt-4o", 2, '```json\n{"score": 4}\n```'),
                    call("tone", "claude-x", 1, 'Sure: {"score": 3} done'),
                    call("tone", "claude-x", 2, '{"score": 3}'),
                    call("apology", "gpt-4o", 1, '{"pass": true}'))
    judged = {k: d.score for k, d in card.dimensions.items() if k != "correctness"}
    assert judged == {"tone": 0.6875, "apology": 1.0}
    details = {d["judge_key"]: d for d in card.llm_judge_details}
    assert [d["judge_key"] for d in card.llm_judge_details] == ["apology", "tone"]
    tone = details["tone"]
    assert (tone["mode"], tone["sample_count"], tone["model_count"]) == ("rubric", 4, 2)
    assert tone["confidence"] == "low"  # spread 0.375 > 0.25
    assert tone["variance"] == 0.04296875  # samples 1, .75, .5, .5
    assert tone["payload"]["model_scores"] == {"gpt-4o": 0.875, "claude-x": 0.5}
    assert details["apology"]["confidence"] == "single-model"
    assert card.warnings == ["challenge input set is unavailable"]


def test_failed_samples_warn_after_sorted_warnings() -> None:
    """A failed sample is a judge warning appended after the sorted ones; score still set."""
    card = evaluate(call("tone", "gpt-4o", 1, "not json"),
                    call("tone", "gpt-4o", 2, '{"score": 5}'),
                    call("tone", "claude-x", 1, error="judge call timed out after 10 ms"),
                    call("tone", "claude-x", 2, '{"score": 5}'),
                    call("apology", "gpt-4o", 1, '{"pass": false}'))
    assert card.dimensions["tone"].score == 1.0
    assert card.warnings[0] == "challenge input set is unavailable"
    assert card.warnings[1].startswith('llm judge "tone" model "gpt-4o" sample 1: parse rubric')
    assert card.warnings[2] == ('llm judge "tone" model "claude-x" sample 1: '
                                "judge call timed out after 10 ms")


def test_all_calls_failed_makes_the_dimension_unavailable() -> None:
    card = evaluate(*[call("tone", m, s, error="boom") for m in ("gpt-4o", "claude-x")
                      for s in (1, 2)], call("apology", "gpt-4o", 1, '{"pass": true}'))
    reason = "all judge invocations failed or returned unparsable output"
    assert (card.dimensions["tone"].state, card.dimensions["tone"].reason) == (
        "unavailable", reason)
    assert card.validity == "degraded"
    assert reason in card.warnings


def test_budget_stopped_judge_is_reported() -> None:
    """A judge whose calls the budget refused says so in reason, payload and warnings,
    and its dimension scores 0."""
    stop = "judge_limits.max_tokens 10 would be exceeded: 0 tokens spent, this call may use 99"
    card = evaluate(*[call("tone", m, s, error=stop, skipped=True)
                      for m in ("gpt-4o", "claude-x") for s in (1, 2)],
                    call("apology", "gpt-4o", 1, '{"pass": true}'))
    tone = next(d for d in card.llm_judge_details if d["judge_key"] == "tone")
    assert tone["reason"] == f"stopped by judge budget: {stop}"
    assert tone["payload"]["budget_stopped"] is True
    assert f'llm judge "tone" model "gpt-4o" sample 1: stopped by judge budget: {stop}' \
        in card.warnings
    # The dimension scores 0, never unavailable: a reply padded past the budget made the
    # judges unavailable and the rest of the scorecard a win (a red-team pass: 250 -> 1000).
    assert card.dimensions["tone"].state == "available"
    assert (card.dimensions["tone"].score, card.dimensions["tone"].reason) == (
        0.0, f"scored 0: {tone['reason']}")


def test_without_recorded_calls_the_judge_is_unavailable() -> None:
    card = scoring.evaluate(scoring.load_spec(SPEC), [DONE])
    reason = "llm judge calls are not recorded in the run's evidence"
    assert card.dimensions["tone"].reason == reason


def test_unavailable_context_wins() -> None:
    """A judge whose context is missing is unavailable with the evidence reason."""
    card = scoring.evaluate(scoring.load_spec(SPEC), [])
    assert card.dimensions["apology"].reason == "final output evidence is unavailable"
    assert 'llm judge "apology" unavailable: final output evidence is unavailable' in card.warnings


def test_supplied_judge_results_are_used_as_given() -> None:
    card = scoring.evaluate(scoring.load_spec(SPEC), [DONE],
                            judge_results={"tone": {"normalized_score": 0.5},
                                           "apology": {"normalized_score": 1.0}})
    assert (card.dimensions["tone"].score, card.llm_judge_details[0]["mode"]) == (0.5, "rubric")
