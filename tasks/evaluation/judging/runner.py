"""A run's judge calls: plan, reserve, send, record (worker side, after the sandbox).

Every planned call ends as exactly one event: ``grader.judge.call_skipped`` when the
budget refuses its worst case, else ``grader.judge.call_completed`` with the raw answer
(or the error, its ``failure`` kind and, after a timeout, its ``control``) and the usage
charged. Calls are sent in rounds within one deadline (:mod:`.rounds`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import Any

from evalfleet.scoring import Case, EvaluationSpec
from evalfleet.scoring.judges import (
    CALL_SKIPPED,
    PLAN_UNAVAILABLE,
    Budget,
    JudgeCall,
    Peer,
    call_payload,
    plan_run,
    request_summary,
)
from evalfleet.scoring.record import decode_events, event_types, extract_evidence

from ...messages import PeerRun
from ..recording import Recorder
from .config import JudgingConfig
from .http import Sender
from .rounds import Deadline, Pending, Rounds

JudgeEvent = tuple[str, dict[str, Any]]


def judged_events(spec: EvaluationSpec, events: list[dict[str, Any]], cases: list[Case],
                  run_id: str, config: JudgingConfig, clock: Callable[[], datetime],
                  sender: Sender | None = None, peers: Sequence[PeerRun] = (),
                  deadline: Deadline | None = None) -> list[dict[str, Any]]:
    """``events`` followed by one event per judge call of the run."""
    own = sender or Sender(config)
    try:
        found = judge_events(spec, events, cases, run_id, own, peer_evidence(peers, cases),
                             deadline)
    finally:
        if sender is None:
            own.close()
    recorder = Recorder(events, clock())
    for event_type, payload in found:
        recorder.add(event_type, payload)
    return recorder.events


def judge_events(spec: EvaluationSpec, events: Iterable[dict[str, Any]], cases: list[Case],
                 run_id: str, sender: Sender, peers: Sequence[Peer] = (),
                 deadline: Deadline | None = None) -> list[JudgeEvent]:
    """Send every planned judge call the budget allows, in rounds within ``deadline``
    (``total_deadline_s`` from now by default); one event per call, in plan order."""
    deadline = deadline or Deadline(sender.config.total_deadline_s)
    evidence = extract_evidence(decode_events(list(events)), cases)
    found: list[JudgeEvent | Pending] = []
    for plan in plan_run(spec, evidence, run_id, peers,
                         max_message_bytes=sender.config.max_message_bytes):
        found += [_pending(call, sender.config) for call in plan.calls]
        if not plan.calls and plan.reason and plan.judge.mode == "n_wise":
            found.append((PLAN_UNAVAILABLE, {"judge_key": plan.judge.key,
                                             "reason": plan.reason}))
    Rounds(sender, Budget.for_spec(spec), deadline).run(
        [p for p in found if isinstance(p, Pending)])
    return [p.event() if isinstance(p, Pending) else p for p in found]


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


def _pending(call: JudgeCall, config: JudgingConfig) -> JudgeEvent | Pending:
    """The call's skip event when its message is past the fleet's limit, else the call to
    send (the budget reserves its worst case just before each attempt)."""
    request = request_summary(call, config.max_output_tokens)
    too_large = _too_large(call, config)
    if too_large:
        return CALL_SKIPPED, call_payload(call, request=request, error=too_large)
    return Pending(call, request)


def _too_large(call: JudgeCall, config: JudgingConfig) -> str:
    """Why the fleet will not send the call's message ("" when it fits)."""
    size = len(call.message.encode("utf-8"))
    if size <= config.max_message_bytes:
        return ""
    return (f"the judge message is {size} bytes, past the fleet's limit of "
            f"{config.max_message_bytes} (EVALFLEET_JUDGES__MAX_MESSAGE_BYTES)")
