"""The judging step's rounds: send each call, tell whose fault a failure is, and send again
what failed on the provider's side, all within one deadline.

Only the judging step is retried, from the run's recorded evidence: a redelivery of the
whole run would give the candidate a re-roll (a new sandbox, new answers). A call that
answered, or whose failure the run's evidence provoked, is never sent again.

* A call is sent with its own timeout, clipped to what is left of the deadline
  (``EVALFLEET_JUDGES__TOTAL_DEADLINE_S``); a call the deadline leaves no time for fails
  as ``deadline``, on the provider's side.
* After a timeout (a full one, not clipped) the call's *control* is sent: the same prompt
  with the evidence replaced by a placeholder (:attr:`JudgeCall.control`), on the same
  model with the same timeout. Answered, the evidence is what kept the model from
  finishing (:mod:`scoring.judges.faults`): the call is recorded with its control and not
  sent again, nor is any other sample of the same message (it would time out the same
  way, spending the deadline the other judges need). Not answered: the provider's.
* Calls that failed on the provider's side are sent again in the next round, after
  ``EVALFLEET_JUDGES__MAX_BACKOFF_S``, up to ``EVALFLEET_JUDGES__ROUNDS`` rounds while the
  deadline lasts. Each attempt reserves its worst case against the budget again; a retry
  the budget refuses keeps the failure it retries.

Control calls are the fleet's own: they are not charged to the pack's ``judge_limits``.
Each call ends as one record: its last attempt, with ``rounds`` saying how many it took.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from evalfleet.scoring.judges import (
    CALL_COMPLETED,
    CALL_SKIPPED,
    Budget,
    JudgeCall,
    Reservation,
    call_payload,
)
from evalfleet.scoring.judges.faults import failure_side

from .http import CallFailed, Reply, Sender

DEADLINE_PASSED = "the judging deadline passed before the call was sent"


@dataclass
class Deadline:
    """One total deadline for a run's judging step, its retries included."""

    seconds: float
    clock: Callable[[], float] = time.monotonic
    sleep: Callable[[float], None] = time.sleep
    start: float = field(default=-1.0)

    def __post_init__(self) -> None:
        if self.start < 0:
            self.start = self.clock()

    def left(self) -> float:
        """Seconds left (0 once passed)."""
        return max(0.0, self.seconds - (self.clock() - self.start))

    def wait(self, seconds: float) -> None:
        """Sleep ``seconds``, never past the deadline."""
        self.sleep(min(seconds, self.left()))


@dataclass
class Pending:
    """One planned call the budget let through, and its latest outcome."""

    call: JudgeCall
    request: dict[str, Any]
    held: Reservation | None = None
    """The worst case held for its next attempt."""
    payload: dict[str, Any] | None = None
    rounds: int = 0
    skipped: str = ""
    """Why the budget refused its first attempt (it is never sent)."""

    def event(self) -> tuple[str, dict[str, Any]]:
        """The call's one event: skipped, or completed with its last attempt."""
        if self.skipped:
            return CALL_SKIPPED, call_payload(self.call, request=self.request,
                                              error=self.skipped)
        return CALL_COMPLETED, self.payload or {}


class Rounds:
    """Sends a run's calls in rounds within its deadline (see the module docstring)."""

    def __init__(self, sender: Sender, budget: Budget, deadline: Deadline) -> None:
        self.sender, self.budget, self.deadline = sender, budget, deadline
        self.controls: dict[tuple[str, str, str], dict[str, Any]] = {}
        """Answered control calls by provider, model and control message."""
        self.provoked: dict[tuple[str, str, str], dict[str, Any]] = {}
        """The evidence's timeout by provider, model and message."""

    def run(self, pending: list[Pending]) -> None:
        """Give every pending call its last outcome (``payload``)."""
        waiting = pending
        for turn in range(self.sender.config.rounds):
            if turn:
                self.deadline.wait(self.sender.config.max_backoff_s)
            waiting = [p for p in waiting if self._again(p)]
            if not waiting or not self.deadline.left():
                break

    def _again(self, pending: Pending) -> bool:
        """Attempt ``pending`` once; whether it failed on the provider's side (retry it)."""
        earlier = self.provoked.get(_key(pending.call, pending.call.message))
        if earlier is not None:
            return self._same_as(pending, earlier)
        if pending.held is None and not self._reserve(pending):
            return False
        pending.rounds += 1
        pending.payload = self._attempt(pending)
        pending.held = None
        return self._provider_side(pending.payload)

    def _reserve(self, pending: Pending) -> bool:
        """Hold the attempt's worst case. A first attempt the budget refuses is skipped; a
        retry it refuses keeps the failure it retries."""
        call = pending.call
        held = self.budget.reserve(call.provider_key, call.model, call.message,
                                   self.sender.config.max_output_tokens)
        if isinstance(held, str):
            pending.skipped = held if pending.payload is None else ""
            return False
        pending.held = held
        return True

    def _same_as(self, pending: Pending, earlier: dict[str, Any]) -> bool:
        """Record an unsent sample of a message whose timeout the evidence provoked."""
        if pending.held is not None:
            self.budget.release(pending.held)
        pending.held = None
        pending.payload = call_payload(
            pending.call, request=pending.request, error=earlier["error"], failure="timeout",
            control=earlier["control"], attempts=0, rounds=pending.rounds,
            not_sent="an earlier sample of the same message timed out while the judge "
                     "answered without the run's evidence")
        return False

    def _attempt(self, pending: Pending) -> dict[str, Any]:
        call, held = pending.call, pending.held
        assert held is not None
        left_ms = int(self.deadline.left() * 1000)
        if left_ms <= 0:
            self.budget.release(held)
            return self._details(pending, error=DEADLINE_PASSED, failure="deadline",
                                 attempts=0)
        sent = dataclasses.replace(call, timeout_ms=min(call.timeout_ms, left_ms))
        started = time.perf_counter()
        try:
            reply = self.sender.send(sent)
        except CallFailed as failed:
            return self._failed(pending, sent, failed, _ms(started))
        charge = self.budget.settle(held, reply.input_tokens, reply.output_tokens)
        usage = {"input_tokens": reply.input_tokens, "output_tokens": reply.output_tokens}
        return self._details(pending, response_text=reply.text, usage=usage,
                             http_status=reply.status, attempts=reply.attempts,
                             duration_ms=_ms(started), charged=asdict(charge))

    def _failed(self, pending: Pending, sent: JudgeCall, failed: CallFailed,
                duration_ms: float) -> dict[str, Any]:
        assert pending.held is not None
        unknown = failed.status is None and failed.attempts > 0  # a timeout may be billed
        charge = self.budget.settle(pending.held, *((None, None) if unknown else (0, 0)))
        details: dict[str, Any] = {
            "error": str(failed), "failure": failed.kind, "http_status": failed.status,
            "attempts": failed.attempts, "duration_ms": duration_ms, "charged": asdict(charge)}
        if failed.kind == "timeout" and sent.timeout_ms == pending.call.timeout_ms:
            details["control"] = self._control(sent)
        payload = self._details(pending, **details)
        if failure_side(str(failed), failed.status, failed.kind, details.get("control")) \
                == "evidence" and "control" in details:
            self.provoked[_key(sent, sent.message)] = payload
        return payload

    def _control(self, call: JudgeCall) -> dict[str, Any]:
        """The control call's outcome: the same prompt without the run's evidence."""
        if not call.control:
            return {"answered": False, "error": "no control message"}
        key = _key(call, call.control)
        if key in self.controls:
            return self.controls[key]
        left_ms = int(self.deadline.left() * 1000)
        control = dataclasses.replace(call, message=call.control,
                                      timeout_ms=min(call.timeout_ms, left_ms))
        started = time.perf_counter()
        try:
            reply = self.sender.send(control) if left_ms > 0 else None
        except CallFailed as failed:
            return {"answered": False, "error": str(failed), "http_status": failed.status}
        if reply is None:
            return {"answered": False, "error": DEADLINE_PASSED}
        found = _answered(reply, _ms(started))
        self.controls[key] = found
        return found

    def _details(self, pending: Pending, **details: Any) -> dict[str, Any]:
        reserved = ({"tokens": pending.held.tokens, "usd": pending.held.usd}
                    if pending.held is not None else None)
        return call_payload(pending.call, request=pending.request, reserved=reserved,
                            rounds=pending.rounds, **details)

    @staticmethod
    def _provider_side(payload: dict[str, Any]) -> bool:
        error = str(payload.get("error") or "")
        return bool(error) and failure_side(error, payload.get("http_status"),
                                            str(payload.get("failure") or ""),
                                            payload.get("control")) == "provider"


def _answered(reply: Reply, duration_ms: float) -> dict[str, Any]:
    return {"answered": True, "duration_ms": duration_ms, "http_status": reply.status,
            "usage": {"input_tokens": reply.input_tokens, "output_tokens": reply.output_tokens}}


def _key(call: JudgeCall, message: str) -> tuple[str, str, str]:
    return call.provider_key, call.model, message


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 3)
