"""Judge calls as run events — the evidence an offline re-score reads instead of a model.

``grader.judge.call_completed``: a call that was sent (or could not be sent because its
provider is not configured): the request summary, the raw response text, usage, error.
``grader.judge.call_skipped``: a call the judge budget refused; never sent.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Final

from ..record import event_types
from ..record.events import Event
from .calls import JudgeCall
from .faults import Side, failure_side

CALL_COMPLETED: Final = event_types.JUDGE_CALL_COMPLETED
CALL_SKIPPED: Final = event_types.JUDGE_CALL_SKIPPED
PLAN_UNAVAILABLE: Final = event_types.JUDGE_UNAVAILABLE
"""A judge that could not plan a single call (e.g. an n_wise peer without evidence)."""
BUDGET_STOP: Final = "stopped by judge budget"
UNJUDGEABLE: Final = "the judge could not score the run's evidence"
"""evalfleet's rule (AgentClash has none): every call was answered unreadably or refused."""


@dataclass(frozen=True)
class CallRecord:
    """What one planned call produced, as scoring reads it back."""

    judge_key: str
    model: str
    provider_key: str
    sample_index: int
    response_text: str = ""
    error: str = ""
    skipped: bool = False
    candidates: tuple[str, ...] = ()
    current: str = ""
    usage: dict[str, Any] = field(default_factory=dict)
    http_status: int | None = None
    failure: str = ""
    """The kind of failure the worker recorded (``timeout``, ``connect``, ``status``, …)."""
    control: dict[str, Any] = field(default_factory=dict)
    """After a timeout: the control call without the run's evidence (``answered``, …)."""

    @property
    def side(self) -> Side:
        """Whose fault the call's error is (:func:`scoring.judges.faults.failure_side`)."""
        return failure_side(self.error, self.http_status, self.failure, self.control)


def request_summary(call: JudgeCall, max_output_tokens: int) -> dict[str, Any]:
    """What was asked, without repeating the whole message."""
    summary: dict[str, Any] = {
        "message_sha256": hashlib.sha256(call.message.encode()).hexdigest(),
        "message_chars": len(call.message), "max_tokens": max_output_tokens,
        "timeout_ms": call.timeout_ms}
    if call.candidates:
        summary.update(candidates=list(call.candidates), current=call.current)
    return summary


def call_payload(call: JudgeCall, **details: Any) -> dict[str, Any]:
    """An event payload naming the call; ``details`` add request/response/usage/error."""
    return {"judge_key": call.judge_key, "mode": call.mode, "model": call.model,
            "provider_key": call.provider_key, "sample_index": call.sample_index, **details}


def records_from_events(events: Iterable[Event]) -> dict[str, list[CallRecord]]:
    """The recorded calls of each judge key, in event order."""
    found: dict[str, list[CallRecord]] = {}
    for event in events:
        if event.type in (CALL_COMPLETED, CALL_SKIPPED):
            record = _record(event)
            found.setdefault(record.judge_key, []).append(record)
    return found


def unavailable_from_events(events: Iterable[Event]) -> dict[str, str]:
    """The recorded reasons of judges that planned no call, by judge key."""
    return {str(e.payload.get("judge_key") or ""): str(e.payload.get("reason") or "")
            for e in events if e.type == PLAN_UNAVAILABLE}


def _record(event: Event) -> CallRecord:
    payload = event.payload
    found = payload.get("request")
    request: dict[str, Any] = found if isinstance(found, dict) else {}
    usage, control = payload.get("usage"), payload.get("control")
    return CallRecord(
        judge_key=str(payload.get("judge_key") or ""), model=str(payload.get("model") or ""),
        provider_key=str(payload.get("provider_key") or ""),
        sample_index=_int(payload.get("sample_index")),
        response_text=str(payload.get("response_text") or ""),
        error=str(payload.get("error") or ""), skipped=event.type == CALL_SKIPPED,
        candidates=tuple(str(c) for c in request.get("candidates") or []),
        current=str(request.get("current") or ""),
        usage=usage if isinstance(usage, dict) else {},
        http_status=_int(payload.get("http_status")) or None,
        failure=str(payload.get("failure") or ""),
        control=control if isinstance(control, dict) else {})


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
