"""What the Clawdiators layer reads from a run's events, beyond AgentClash's evidence.

* the agent's trajectory: ``model.call.completed`` and ``tool.call.*`` events, and whether
  it is *verified* (docs/scoring.md §C4: non-empty, every step within [start − 5 s, end + 5 s]);
* ``grader.evaluator.completed``: the custom-script evaluator's outcome (written by the
  worker, so a stored run re-scores offline);
* ``grader.submission.manifest``: the submitted files' paths and sizes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from ..record import event_types
from ..record.events import Event, decode_events, order_events

#: The layer's name, under which the core keeps its reading of a run (``readings``).
NAME = "clawdiators"
TRAJECTORY_EVENTS = frozenset({event_types.MODEL_CALL_COMPLETED, event_types.TOOL_CALL_COMPLETED,
                               event_types.TOOL_CALL_FAILED})
#: Clawdiators' replay-log tolerance around the match window (§C4).
SLACK = timedelta(seconds=5)


@dataclass(frozen=True)
class RunInfo:
    """The layer's evidence of one run."""

    model_calls: int = 0
    trajectory_steps: int = 0
    verified: bool = False
    unverified_reason: str = "no agent trajectory supplied"
    evaluator: dict[str, Any] | None = None
    files: dict[str, int] | None = None
    """Submitted file path → size in bytes, when a manifest was recorded."""


def info_of(reading: object) -> RunInfo:
    """The layer's reading as handed back by the core (a blank one when there is none)."""
    return reading if isinstance(reading, RunInfo) else RunInfo()


def info_in(readings: Mapping[str, object]) -> RunInfo | None:
    """The layer's reading among every layer's, if it was taken."""
    reading = readings.get(NAME)
    return reading if isinstance(reading, RunInfo) else None


def run_info(events: list[Event]) -> RunInfo:
    """Summarize ``events`` for the layer (pure)."""
    ordered = order_events(events)
    steps = [e for e in ordered if e.type in TRAJECTORY_EVENTS]
    verified, reason = _verify(steps, _bounds(ordered))
    return RunInfo(
        model_calls=sum(e.type == event_types.MODEL_CALL_COMPLETED for e in steps),
        trajectory_steps=len(steps), verified=verified, unverified_reason=reason,
        evaluator=_last_payload(ordered, event_types.EVALUATOR_COMPLETED), files=_manifest(ordered))


def trajectory_verified(events: Iterable[Any]) -> bool:
    """Whether a run's events hold a verified agent trajectory (docs/scoring.md §C4): what
    Clawdiators' verified rating bonus rests on.

    A fact of the events alone, whatever the spec: false with no ``model.call.completed``
    or ``tool.call.*`` event (the worker writes neither), or with a step outside the run's
    window.

    Raises:
        pydantic.ValidationError: an event does not decode.
    """
    return run_info(decode_events(list(events))).verified


def _bounds(events: list[Event]) -> tuple[datetime | None, datetime | None]:
    start = next((e.occurred_at for e in events if e.type == event_types.RUN_STARTED), None)
    ends = [e.occurred_at for e in events
            if e.type in (event_types.RUN_COMPLETED, event_types.RUN_FAILED) and e.occurred_at]
    return start, (max(ends) if ends else None)


def _verify(steps: list[Event], bounds: tuple[datetime | None, datetime | None]
            ) -> tuple[bool, str]:
    if not steps:
        return False, "no agent trajectory supplied"
    start, end = bounds
    for step in steps:
        at = step.occurred_at
        if at is None or not _within(at, start, end):
            return False, f"trajectory step {step.type} lies outside the run's time window"
    return True, ""


def _within(at: datetime, start: datetime | None, end: datetime | None) -> bool:
    """Whether ``at`` lies in the run's window, give or take :data:`SLACK` (a window at
    the very edge of the calendar, year 1 or 9999, is no window)."""
    try:
        return not ((start and at < start - SLACK) or (end and at > end + SLACK))
    except OverflowError:
        return False


def _last_payload(events: list[Event], kind: str) -> dict[str, Any] | None:
    found = [e.payload for e in events if e.type == kind]
    return dict(found[-1]) if found else None


def _manifest(events: list[Event]) -> dict[str, int] | None:
    payload = _last_payload(events, event_types.SUBMISSION_MANIFEST)
    if payload is None:
        return None
    entries = payload.get("files")
    return {str(f.get("path")): int(f.get("size") or 0) for f in entries or []
            if isinstance(f, dict) and isinstance(f.get("path"), str)}
