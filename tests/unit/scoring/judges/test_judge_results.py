"""Judge results rebuilt from ``grader.judge.*`` events through ``evaluate`` (docs/scoring.md §13,
§14, §16)."""

from __future__ import annotations

from typing import Any

import pytest

from evalfleet import scoring
from evalfleet.scoring.judges import CALL_COMPLETED, CALL_SKIPPED

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
         skipped: bool = False, status: int | None = None) -> dict[str, Any]:
    payload = {"judge_key": key, "model": model, "provider_key": "p", "sample_index": sample,
               "response_text": text, "error": error, "http_status": status}
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


TONE_CALLS = [(m, s) for m in ("gpt-4o", "claude-x") for s in (1, 2)]
REFUSED = "judge provider answered HTTP 400: prompt is too long"


def tone_scored_with(*tone: dict[str, Any]) -> tuple[scoring.Scorecard, dict[str, Any]]:
    card = evaluate(*tone, call("apology", "gpt-4o", 1, '{"pass": true}'))
    return card, next(d for d in card.llm_judge_details if d["judge_key"] == "tone")


@pytest.mark.parametrize(("tone", "first"), [
    ([call("tone", m, s, "OK") for m, s in TONE_CALLS], "parse rubric judge response"),
    ([call("tone", m, s, error=REFUSED, status=400) for m, s in TONE_CALLS], REFUSED),
    ([call("tone", "gpt-4o", 1, error="stopped", skipped=True), call("tone", "gpt-4o", 2, "OK"),
      *[call("tone", "claude-x", s, error=REFUSED, status=413) for s in (1, 2)]],
     "parse rubric judge response"),
])
def test_a_judge_the_evidence_left_without_a_score_scores_0(tone: list[dict[str, Any]],
                                                            first: str) -> None:
    """Replies that cannot be read (a prompt injection in the answer makes the judge reply
    "OK") and requests the provider refuses (an answer too large for the model): the run's
    evidence kept every sample from scoring, so the dimension scores 0. Unavailable, it let
    a rude reply win on the rest of the scorecard (a red-team pass: 250 -> 1000)."""
    card, detail = tone_scored_with(*tone)
    assert detail["reason"].startswith(f"the judge could not score the run's evidence: {first}")
    assert (card.dimensions["tone"].state, card.dimensions["tone"].score) == ("available", 0.0)
    assert card.dimensions["tone"].reason == f"scored 0: {detail['reason']}"
    assert card.validity == "valid"


@pytest.mark.parametrize("failure", [
    {"error": "judge call timed out after 10 ms"},
    {"error": "judge provider gave up after 3 attempts: HTTP 503: busy", "status": 503},
    {"error": "judge provider answered HTTP 401: bad key", "status": 401},
    {"error": 'judge provider "p" is not configured'},
])
def test_a_failure_on_the_provider_side_keeps_the_judge_unavailable(
        failure: dict[str, Any]) -> None:
    """One call failing on the provider's or the operator's side is enough: the candidate
    did not cause it, and AgentClash's reason stands."""
    tone = [call("tone", m, s, "OK") for m, s in TONE_CALLS[1:]]
    card, detail = tone_scored_with(call("tone", "gpt-4o", 1, **failure), *tone)
    assert detail["reason"] == "all judge invocations failed or returned unparsable output"
    assert card.dimensions["tone"].state == "unavailable"


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


def test_missing_run_evidence_scores_the_judge_0() -> None:
    """A judge whose context names the run's own evidence (here ``final_output``) and finds
    none scores 0: leaving the judged output out made the judge unavailable and a run that
    passed the tests but explained badly won (a red-team pass: 390 -> 975)."""
    card = scoring.evaluate(scoring.load_spec(SPEC), [])
    reason = "the judge could not score the run's evidence: final output evidence is unavailable"
    assert (card.dimensions["apology"].state, card.dimensions["apology"].score) == (
        "available", 0.0)
    assert card.dimensions["apology"].reason == f"scored 0: {reason}"
    assert f'llm judge "apology" {reason}' in card.warnings
    detail = next(d for d in card.llm_judge_details if d["judge_key"] == "apology")
    assert (detail["reason"], detail["sample_count"]) == (reason, 0)


def test_missing_pack_evidence_leaves_the_judge_unavailable() -> None:
    """Context the pack gives (the case's challenge input) is no fault of the run."""
    spec = {**SPEC, "llm_judges": [{**SPEC["llm_judges"][1],  # type: ignore[index]
                                    "context_from": ["challenge_input", "final_output"]}],
            "scorecard": {"dimensions": [
                "correctness", {"key": "apology", "source": "llm_judge",
                                "judge_key": "apology"}]}}
    card = scoring.evaluate(scoring.load_spec(spec), [DONE])
    assert card.dimensions["apology"].reason == "challenge input evidence is unavailable"
    assert card.dimensions["apology"].state == "unavailable"
    assert 'llm judge "apology" unavailable: challenge input evidence is unavailable' \
        in card.warnings


def test_supplied_judge_results_are_used_as_given() -> None:
    card = scoring.evaluate(scoring.load_spec(SPEC), [DONE],
                            judge_results={"tone": {"normalized_score": 0.5},
                                           "apology": {"normalized_score": 1.0}})
    assert (card.dimensions["tone"].score, card.llm_judge_details[0]["mode"]) == (0.5, "rubric")


def test_a_model_listed_twice_keeps_its_later_score() -> None:
    """``models: [gpt-4o, gpt-4o]``: each listing samples on its own; the later listing's
    median replaces the earlier one (AgentClash's map of model scores), and every call is
    reported once."""
    spec = {**SPEC, "llm_judges": [{**SPEC["llm_judges"][0],  # type: ignore[index]
                                    "models": ["gpt-4o", "gpt-4o"]}],
            "scorecard": {"dimensions": [{"key": "tone", "source": "llm_judge",
                                          "judge_key": "tone"}]}}
    calls = [call("tone", "gpt-4o", s, f'{{"score": {v}}}')
             for s, v in ((1, 5), (2, 5), (1, 1), (2, 1))]
    card = scoring.evaluate(scoring.load_spec(spec), [DONE, *calls])
    tone = card.llm_judge_details[0]
    assert card.dimensions["tone"].score == 0.0
    assert tone["payload"]["model_scores"] == {"gpt-4o": 0.0}
    assert len(tone["payload"]["calls"]) == 4


def test_an_n_wise_context_error_is_worded_as_agentclash_words_it() -> None:
    """``buildNWiseCandidates``: a run's malformed context is "resolve n_wise context for
    <id>: <err>", and the judge "errored"; a missing one is "judge context unavailable"."""
    from evalfleet.scoring.judges.calls import n_wise_reason
    from evalfleet.scoring.judges.prompts import Context
    from evalfleet.scoring.record import event_types

    assert n_wise_reason("r1", Context(reason="boom", error=True)) == (
        "resolve n_wise context for r1: boom")
    assert n_wise_reason("r1", Context(reason="gone")) == (
        "judge context unavailable for run agent r1: gone")
    spec = {**SPEC, "llm_judges": [{"key": "rank", "mode": "n_wise", "prompt": "p",
                                    "model": "gpt-4o", "context_from": ["final_output"]}],
            "scorecard": {"dimensions": [{"key": "rank", "source": "llm_judge",
                                          "judge_key": "rank"}]}}
    unplanned = {"type": event_types.JUDGE_UNAVAILABLE, "payload": {
        "judge_key": "rank", "reason": "resolve n_wise context for peer: boom"}}
    card = scoring.evaluate(scoring.load_spec(spec), [DONE, unplanned])
    assert 'llm judge "rank" errored: resolve n_wise context for peer: boom' in card.warnings


def test_calls_of_a_model_the_judge_does_not_list_are_not_read() -> None:
    """A stored run re-scored against a pack whose judge names other models: no call of its
    models was recorded, so the judge has no score (this raised IndexError)."""
    card, detail = tone_scored_with(call("tone", "other-model", 1, '{"score": 5}'))
    assert detail["reason"] == "all judge invocations failed or returned unparsable output"
    assert card.dimensions["tone"].state == "unavailable"
