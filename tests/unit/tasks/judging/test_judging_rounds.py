"""The judging step's rounds on a fake clock: retries of the provider's failures within one
deadline, control calls after a timeout, and what each call records (issue 43)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from evalfleet.scoring.judges import CALL_COMPLETED, CALL_SKIPPED, Budget, JudgeCall
from evalfleet.tasks.evaluation.judging import CallFailed, JudgingConfig, Reply, Sender
from evalfleet.tasks.evaluation.judging.rounds import DEADLINE_PASSED, Deadline, Pending, Rounds

Outcome = Reply | CallFailed
OK = Reply('{"score": 4}', 10, 5, 200, 1)


def timeout(ms: int) -> CallFailed:
    return CallFailed(f"judge call timed out after {ms} ms", None, 1, "timeout")


class Clock:
    """A fake monotonic clock; sleeping advances it."""

    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


class FakeSender(Sender):
    """Answers each call with ``answer(call)``; a timeout takes the call's whole timeout,
    anything else ``took`` seconds of the fake clock."""

    def __init__(self, clock: Clock, answer: Callable[[JudgeCall], Outcome],
                 took: float = 0.1, **policy: Any) -> None:
        super().__init__(JudgingConfig(max_backoff_s=2.0, **policy))
        self.clock, self.answer, self.took = clock, answer, took
        self.sent: list[JudgeCall] = []

    def send(self, call: JudgeCall) -> Reply:
        self.sent.append(call)
        outcome = self.answer(call)
        slow = isinstance(outcome, CallFailed) and outcome.kind == "timeout"
        self.clock.now += call.timeout_ms / 1000 if slow else self.took
        if isinstance(outcome, CallFailed):
            if slow:
                raise timeout(call.timeout_ms)
            raise outcome
        return outcome


def call(sample: int = 1, message: str = "judge: reply", timeout_ms: int = 10_000,
         model: str = "gpt-4o") -> JudgeCall:
    return JudgeCall("tone", "rubric", model, "openai", sample, message, timeout_ms,
                     control="judge: (not shown)")


def judged(sender: FakeSender, clock: Clock, *calls: JudgeCall, seconds: float = 60.0,
           budget: Budget | None = None) -> list[Pending]:
    pending = [Pending(c, {"timeout_ms": c.timeout_ms}) for c in calls]
    Rounds(sender, budget or Budget(), Deadline(seconds, clock, clock.sleep)).run(pending)
    return pending


def test_an_answer_is_sent_once() -> None:
    """A call that answered is recorded once, in round 1, and never sent again."""
    clock = Clock()
    sender = FakeSender(clock, lambda c: OK)
    [done] = judged(sender, clock, call())
    assert done.event()[0] == CALL_COMPLETED
    assert (done.payload or {})["response_text"] == '{"score": 4}'
    assert ((done.payload or {})["rounds"], len(sender.sent)) == (1, 1)


@pytest.mark.parametrize("failure", [
    CallFailed("judge provider gave up after 3 attempts: HTTP 503: busy", 503, 3, "status"),
    CallFailed("judge provider gave up after 3 attempts: connection refused", None, 3,
               "connect"),
    CallFailed('judge provider "openai" is not configured', None, 0, "no_endpoint"),
], ids=["5xx", "refused connection", "no endpoint"])
def test_a_provider_failure_is_retried_in_the_next_round(failure: CallFailed) -> None:
    """The provider failed round 1; round 2, after max_backoff_s, answers."""
    clock = Clock()
    outcomes = iter([failure, OK])
    sender = FakeSender(clock, lambda c: next(outcomes))
    [done] = judged(sender, clock, call())
    assert (done.payload or {})["rounds"] == 2 and "error" not in (done.payload or {})
    assert clock.slept == [2.0]


def test_a_provider_that_never_answers_is_tried_rounds_times() -> None:
    """Three rounds (the default), then the last failure stands, with its kind."""
    clock = Clock()
    sender = FakeSender(clock, lambda c: CallFailed("HTTP 503", 503, 3, "status"))
    [done] = judged(sender, clock, call())
    payload = done.payload or {}
    assert (payload["rounds"], payload["failure"], payload["http_status"]) == (3, "status", 503)
    assert len(sender.sent) == 3


def test_a_timeout_with_an_answered_control_is_the_evidences() -> None:
    """The call timed out, the same prompt without the evidence answered: recorded with its
    control, never retried; the other samples of the same message are not sent at all."""
    clock = Clock()
    sender = FakeSender(clock, lambda c: OK if "(not shown)" in c.message else timeout(0))
    first, second = judged(sender, clock, call(1), call(2))
    payload = first.payload or {}
    assert (payload["failure"], payload["control"]["answered"]) == ("timeout", True)
    assert payload["error"] == "judge call timed out after 10000 ms"
    assert [c.message for c in sender.sent] == ["judge: reply", "judge: (not shown)"]
    assert (second.payload or {})["not_sent"].startswith("an earlier sample of the same")
    assert (second.payload or {})["control"]["answered"] is True
    assert clock.slept == []  # nothing to retry


def test_a_timeout_whose_control_times_out_is_the_providers() -> None:
    """Neither the call nor its control answered in time: retried (a stalled provider),
    each timeout's control sent again, until the deadline ends the rounds."""
    clock = Clock()
    sender = FakeSender(clock, lambda c: timeout(0))
    [done] = judged(sender, clock, call(), seconds=35.0)
    payload = done.payload or {}
    assert payload["control"] == {"answered": False,
                                  "error": "judge call timed out after 3000 ms",
                                  "http_status": None}
    # round 1: 10 s + 10 s control; wait 2 s; round 2: 10 s + 3 s (the control clipped)
    assert [c.timeout_ms for c in sender.sent] == [10_000, 10_000, 10_000, 3_000]
    assert payload["rounds"] == 2 and clock.now == 35.0


def test_the_deadline_clips_calls_and_a_clipped_timeout_sends_no_control() -> None:
    """A call sent with less than its timeout: its timeout says nothing of the evidence."""
    clock = Clock()
    sender = FakeSender(clock, lambda c: timeout(0))
    [done] = judged(sender, clock, call(), seconds=4.0)
    payload = done.payload or {}
    assert payload["error"] == "judge call timed out after 4000 ms"
    assert "control" not in payload and len(sender.sent) == 1


def test_calls_the_deadline_leaves_no_time_for_fail_on_the_providers_side() -> None:
    """Two judges' calls, a deadline the first one's stall used up: the second is never
    sent, and records the deadline (the provider's side: no result, never a win)."""
    clock = Clock()
    sender = FakeSender(clock, lambda c: timeout(0))
    stalled, late = judged(sender, clock, call(model="gpt-4o"), call(model="claude-x"),
                           seconds=10.0)
    assert (late.payload or {})["error"] == DEADLINE_PASSED
    assert (late.payload or {})["failure"] == "deadline"
    assert len(sender.sent) == 1 and clock.slept == []
    assert (stalled.payload or {})["failure"] == "timeout"


def test_waits_between_rounds_never_pass_the_deadline() -> None:
    """A round's wait is clipped to what is left of the deadline; the rounds then stop."""
    clock = Clock()
    sender = FakeSender(clock, lambda c: CallFailed("HTTP 500", 500, 3, "status"), took=9.0)
    judged(sender, clock, call(), seconds=10.0)
    assert clock.slept == [1.0] and clock.now == 10.0 and len(sender.sent) == 1


def test_the_budget_refuses_a_first_attempt_as_a_skip_and_a_retry_keeps_its_failure() -> None:
    """A first attempt past judge_limits is skipped (never sent); a retry past them keeps
    the provider's failure it would have retried."""
    clock = Clock()
    sender = FakeSender(clock, lambda c: timeout(0))
    budget = Budget(max_tokens=1200)  # one call's worst case: 12 + 64 + 1024 tokens
    first, second = judged(sender, clock, call(1), call(2), budget=budget, seconds=100.0)
    assert first.event()[0] == CALL_COMPLETED and second.event()[0] == CALL_SKIPPED
    assert second.event()[1]["error"].startswith("judge_limits.max_tokens 1200")
    payload = first.payload or {}
    assert (payload["rounds"], payload["charged"]["tokens"]) == (1, 1100)  # a timeout bills
    assert len(sender.sent) == 2  # the call and its control (the fleet's, not charged)


def test_a_control_answer_is_asked_once_per_model_and_prompt() -> None:
    """Two different messages timing out on the same model share one control call."""
    clock = Clock()
    sender = FakeSender(clock, lambda c: OK if "(not shown)" in c.message else timeout(0))
    judged(sender, clock, call(1, "judge: a"), call(1, "judge: b"), seconds=100.0)
    assert [c.message for c in sender.sent] == ["judge: a", "judge: (not shown)", "judge: b"]
