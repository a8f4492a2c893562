"""Whose fault a failed judge call is, and a starved judge's scorecard (docs/scoring.md §14).

A judge whose calls failed on the provider's side leaves its dimension unavailable as
AgentClash does, and the scorecard withholds ``score`` and ``result``; a failure the run's
evidence provoked scores the dimension 0 with the reason.
"""

from __future__ import annotations

from typing import Any

import pytest

from evalfleet import scoring
from evalfleet.scoring.judges import CALL_COMPLETED
from evalfleet.scoring.judges.faults import failure_side, starved_judges
from evalfleet.scoring.run import engine

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
TONE_CALLS = [(m, s) for m in ("gpt-4o", "claude-x") for s in (1, 2)]
TIMEOUT = "judge call timed out after 20000 ms"
ANSWERED = {"answered": True, "duration_ms": 35.0, "http_status": 200}
UNANSWERED = {"answered": False, "error": TIMEOUT}


@pytest.mark.parametrize(("error", "status", "failure", "control", "side"), [
    (TIMEOUT, None, "timeout", ANSWERED, "evidence"),
    (TIMEOUT, None, "timeout", UNANSWERED, "provider"),
    (TIMEOUT, None, "timeout", None, "provider"),
    (TIMEOUT, None, "", ANSWERED, "provider"),  # a control is only read after a timeout
    ("judge provider answered HTTP 400: too long", 400, "status", None, "evidence"),
    ("judge provider answered HTTP 413: too large", 413, "status", None, "evidence"),
    ("judge provider gave up after 3 attempts: HTTP 503", 503, "status", None, "provider"),
    ("judge provider gave up after 3 attempts: HTTP 429", 429, "status", None, "provider"),
    ("judge provider answered HTTP 401: bad key", 401, "status", None, "provider"),
    ("judge provider gave up after 3 attempts: connection refused", None, "connect", None,
     "provider"),
    ('judge provider "openai" is not configured', None, "no_endpoint", None, "provider"),
    ("the judging deadline passed before the call was sent", None, "deadline", None,
     "provider"),
    ("judge call failed: ConnectError", None, "transport", None, "provider"),
], ids=["timeout, control answered", "timeout, control timed out", "timeout, no control",
        "not a timeout", "400", "413", "503", "429", "401", "refused connection",
        "no endpoint", "deadline", "dns"])
def test_failure_side(error: str, status: int | None, failure: str,
                      control: dict[str, Any] | None, side: str) -> None:
    """Only what the candidate's text can provoke is the evidence's; the rest the provider's."""
    assert side == failure_side(error, status, failure, control)


def call(key: str, model: str, sample: int, text: str = "",
         error: str = "") -> dict[str, Any]:
    payload = {"judge_key": key, "model": model, "provider_key": "p", "sample_index": sample,
               "response_text": text, "error": error}
    return {"type": CALL_COMPLETED, "payload": payload}


def timed_out(model: str, sample: int, control: dict[str, Any] | None) -> dict[str, Any]:
    event = call("tone", model, sample, error=TIMEOUT)
    event["payload"].update(failure="timeout", control=control)
    return event


def scored(*tone: dict[str, Any], apology: str = '{"pass": true}') -> scoring.Scorecard:
    spec = scoring.load_spec(SPEC)
    return scoring.evaluate(spec, [DONE, *tone, call("apology", "gpt-4o", 1, apology)])


def test_a_timeout_the_evidence_provoked_scores_the_judge_0() -> None:
    """Every call timed out while the judge answered the prompt without the run's evidence:
    the evidence kept the model from finishing, so the dimension scores 0 and says why."""
    card = scored(*[timed_out(m, s, ANSWERED) for m, s in TONE_CALLS])
    tone = card.dimensions["tone"]
    assert (tone.state, tone.score) == ("available", 0.0)
    assert tone.reason == ("scored 0: the judge could not score the run's evidence: "
                           f"{TIMEOUT}, while the judge answered the same prompt without "
                           "the run's evidence in 35 ms")
    assert card.result is not None and card.withheld_reason is None


def test_a_starved_judge_withholds_score_and_result() -> None:
    """A provider that never answered: AgentClash's fields are its engine's (the dimension
    unavailable, degraded, passed), but score and result are null with the judge named."""
    card = scored(*[timed_out(m, s, UNANSWERED) for m, s in TONE_CALLS])
    assert card.dimensions["tone"].state == "unavailable"
    assert (card.validity, card.passed, card.status) == ("degraded", True, "partial")
    assert card.overall_score == 1.0  # AgentClash's verdict on what is left
    assert (card.score, card.result) == (None, None)
    assert card.withheld_reason == ('no result: judge "tone" got no answer from the provider '
                                    "(every call failed on its side); a dimension left "
                                    "unavailable that way decides nothing")
    detail = next(d for d in card.llm_judge_details if d["judge_key"] == "tone")
    assert detail["payload"]["provider_failures"] == 4


def test_agentclash_fields_are_unchanged_by_the_withholding(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Everything but score, result and withheld_reason is
    what the engine gives without the rule (a draw of 500 on what is left)."""
    tone = [call("tone", m, s, error="boom") for m, s in TONE_CALLS]
    card = scored(*tone, apology='{"pass": false}')
    monkeypatch.setattr(engine, "withheld_reason", lambda *args: None)
    plain = scored(*tone, apology='{"pass": false}')
    ours = {"score", "result", "withheld_reason"}
    assert (plain.score, plain.result) == (500, "draw")
    assert (card.score, card.result) == (None, None)
    assert plain.model_dump(exclude=ours) == card.model_dump(exclude=ours)


def test_a_judge_with_some_answers_decides() -> None:
    """One sample answered: the judge has a score, nothing is withheld."""
    card = scored(timed_out("gpt-4o", 1, UNANSWERED), call("tone", "gpt-4o", 2, '{"score": 5}'),
                  *[timed_out("claude-x", s, UNANSWERED) for s in (1, 2)])
    assert (card.dimensions["tone"].score, card.result) == (1.0, "win")


def test_a_mix_of_provider_and_evidence_failures_is_starved() -> None:
    """A provider failure among the evidence's: the judge stays unavailable (not 0)."""
    card = scored(timed_out("gpt-4o", 1, UNANSWERED),
                  *[timed_out(m, s, ANSWERED) for m, s in TONE_CALLS[1:]])
    assert card.dimensions["tone"].state == "unavailable" and card.result is None


def test_starved_judges_are_named_once_in_dimension_order() -> None:
    """Two dimensions of one judge, and an available one: the judge is named once."""
    failed = {"payload": {"provider_failures": 2}}
    dims = {"a": ("unavailable", "j2"), "b": ("unavailable", "j1"),
            "c": ("unavailable", "j2"), "d": ("available", "j3")}
    assert starved_judges(dims, {"j1": failed, "j2": failed, "j3": failed}) == ["j2", "j1"]
    assert starved_judges({"a": ("unavailable", "j1")}, {"j1": {"payload": {}}}) == []
