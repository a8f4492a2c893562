"""A run's judge calls: plan, reserve, send, record (worker side, after the sandbox).

Every planned call ends as exactly one event: ``grader.judge.call_skipped`` when the
budget refuses its worst case, else ``grader.judge.call_completed`` with the raw answer
(or the error) and the usage charged.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict
from datetime import datetime
from typing import Any

from evalfleet.scoring import Case, EvaluationSpec
from evalfleet.scoring.judges import (
    CALL_COMPLETED,
    CALL_SKIPPED,
    PLAN_UNAVAILABLE,
    Budget,
    JudgeCall,
    Peer,
    Reservation,
    call_payload,
    plan_run,
    request_summary,
)
from evalfleet.scoring.record import decode_events, event_types, extract_evidence

from ...messages import PeerRun
from ..recording import Recorder
from .config import JudgingConfig
from .http import CallFailed, Sender

JudgeEvent = tuple[str, dict[str, Any]]


def judged_events(spec: EvaluationSpec, events: list[dict[str, Any]], cases: list[Case],
                  run_id: str, config: JudgingConfig, clock: Callable[[], datetime],
                  sender: Sender | None = None,
                  peers: Sequence[PeerRun] = ()) -> list[dict[str, Any]]:
    """``events`` followed by one event per judge call of the run."""
    own = sender or Sender(config)
    try:
        found = judge_events(spec, events, cases, run_id, own, peer_evidence(peers, cases))
    finally:
        if sender is None:
            own.close()
    recorder = Recorder(events, clock())
    for event_type, payload in found:
        recorder.add(event_type, payload)
    return recorder.events


def judge_events(spec: EvaluationSpec, events: Iterable[dict[str, Any]], cases: list[Case],
                 run_id: str, sender: Sender, peers: Sequence[Peer] = ()) -> list[JudgeEvent]:
    """Send every planned judge call the budget allows; one event per call."""
    evidence = extract_evidence(decode_events(list(events)), cases)
    budget = Budget.for_spec(spec)
    found: list[JudgeEvent] = []
    for plan in plan_run(spec, evidence, run_id, peers,
                         max_message_bytes=sender.config.max_message_bytes):
        found += [_one(call, budget, sender) for call in plan.calls]
        if not plan.calls and plan.reason and plan.judge.mode == "n_wise":
            found.append((PLAN_UNAVAILABLE, {"judge_key": plan.judge.key,
                                             "reason": plan.reason}))
    return found


def peer_evidence(peers: Sequence[PeerRun], cases: list[Case]) -> list[Peer]:
    """Each peer run's evidence, read against the same case."""
    return [Peer(p.run_id, extract_evidence(decode_events(_peer_events(p)), cases))
            for p in peers]


def _peer_events(peer: PeerRun) -> list[dict[str, Any]]:
    if peer.final_output is None:
        return peer.events
    done = {"type": event_types.RUN_COMPLETED, "occurred_at": "1970-01-01T00:00:00Z",
            "payload": {"final_output": peer.final_output}}
    return [*peer.events, done]


def _one(call: JudgeCall, budget: Budget, sender: Sender) -> JudgeEvent:
    max_tokens = sender.config.max_output_tokens
    request = request_summary(call, max_tokens)
    held = _too_large(call, sender.config) or budget.reserve(
        call.provider_key, call.model, call.message, max_tokens)
    if isinstance(held, str):
        return CALL_SKIPPED, call_payload(call, request=request, error=held)
    return CALL_COMPLETED, _sent(call, held, budget, sender, request)


def _too_large(call: JudgeCall, config: JudgingConfig) -> str:
    """Why the fleet will not send the call's message ("" when it fits)."""
    size = len(call.message.encode("utf-8"))
    if size <= config.max_message_bytes:
        return ""
    return (f"the judge message is {size} bytes, past the fleet's limit of "
            f"{config.max_message_bytes} (EVALFLEET_JUDGES__MAX_MESSAGE_BYTES)")


def _sent(call: JudgeCall, held: Reservation, budget: Budget, sender: Sender,
          request: dict[str, Any]) -> dict[str, Any]:
    reserved = {"tokens": held.tokens, "usd": held.usd}
    started = time.perf_counter()
    try:
        reply = sender.send(call)
    except CallFailed as failed:
        unknown = failed.status is None and failed.attempts > 0  # a timeout may be billed
        charge = budget.settle(held, None, None) if unknown else budget.settle(held, 0, 0)
        return call_payload(call, request=request, error=str(failed), http_status=failed.status,
                            attempts=failed.attempts, duration_ms=_ms(started),
                            reserved=reserved, charged=asdict(charge))
    charge = budget.settle(held, reply.input_tokens, reply.output_tokens)
    usage = {"input_tokens": reply.input_tokens, "output_tokens": reply.output_tokens}
    return call_payload(call, request=request, response_text=reply.text, usage=usage,
                        http_status=reply.status, attempts=reply.attempts,
                        duration_ms=_ms(started), reserved=reserved, charged=asdict(charge))


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 3)
