"""A sandbox's :class:`~sandbox.plan.PlanResult` as AgentClash events (the run's evidence).

When the request carries the agent's own events, they tell the ``system.run.*`` story and
the worker adds only sandbox and grader events; otherwise the worker writes
``system.run.started``/``completed`` from the commands it ran.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from pydantic import ValidationError

from evalfleet.sandbox.evaluator import EvaluatorRecord
from evalfleet.sandbox.plan import PlanResult
from evalfleet.sandbox.results import DirectoryListing, ExecResult, FileCapture, text
from evalfleet.scoring.record import Event, event_types
from evalfleet.scoring.record import grader_events as payloads

from .code_executed import record


class Recorder:
    """Appends events with increasing sequence numbers after the platform's own."""

    def __init__(self, events: list[dict[str, Any]], now: datetime) -> None:
        self.events = [_decoded(e) for e in events]
        numbers = [_sequence_number(e) for e in self.events]
        self.next = max([n for n in numbers if n is not None] + [len(self.events)]) + 1
        self.now = now

    def add(self, event_type: str, payload: dict[str, Any],
            at: datetime | None = None) -> None:
        self.events.append({"type": event_type, "sequence_number": self.next,
                            "occurred_at": (at or self.now).isoformat(), "payload": payload})
        self.next += 1


def _sequence_number(event: dict[str, Any]) -> int | None:
    """The event's sequence number as scoring reads it: ``"100"`` and ``100.0`` are 100
    there, so the fleet's own events must come after them too."""
    number = event.get("sequence_number")
    if number is None or isinstance(number, int):
        return number
    try:
        return Event.model_validate({"type": "", "sequence_number": number}).sequence_number
    except ValidationError:
        return None


def _decoded(event: dict[str, Any]) -> dict[str, Any]:
    """A submitted event with its payload as an object: AgentClash's wire also allows JSON
    text, which the intake has decoded once already (:class:`scoring.record.events.Event`)."""
    if not isinstance(event.get("payload"), str | bytes):
        return dict(event)
    return {**event, "payload": Event.model_validate(event).payload}


def command_events(recorder: Recorder, result: PlanResult) -> None:
    for index, outcome in enumerate(result.commands):
        if not outcome.ok:
            recorder.add(event_types.COMMAND_FAILED, _command_payload(index, outcome))


def _command_payload(index: int, outcome: ExecResult) -> dict[str, Any]:
    return payloads.command_failed(
        index, outcome.exit_code, timed_out=outcome.timed_out, oom_killed=outcome.oom_killed,
        stdout=text(outcome.stdout), stderr=text(outcome.stderr),
        stdout_truncated=outcome.stdout_truncated, stderr_truncated=outcome.stderr_truncated,
        duration_ms=round(outcome.duration_s * 1000, 3), error=outcome.error or "")


def run_story(recorder: Recorder, started: datetime, result: PlanResult,
              final_output: str | None) -> None:
    """``system.run.started``/``completed`` from the commands the worker ran."""
    latency_ms = int(sum(c.duration_s for c in result.commands) * 1000)
    recorder.add(event_types.RUN_STARTED, {}, started)
    payload: dict[str, Any] = {"latency_ms": latency_ms}
    if final_output is not None:
        payload["final_output"] = final_output
    recorder.add(event_types.RUN_COMPLETED, payload, started + timedelta(milliseconds=latency_ms))


def submission_refused(recorder: Recorder, path: str, reason: str) -> None:
    """The submission's files the sandbox could not hold (:mod:`tasks.evaluation.refusals`):
    evalfleet's ``grader.submission.refused``, which scores the run as the candidate's
    loss (docs/scoring.md §18), then AgentClash's ``system.run.failed`` with the reason
    (the run did not complete)."""
    recorder.add(event_types.SUBMISSION_REFUSED, payloads.submission_refused(path, reason))
    recorder.add(event_types.RUN_FAILED, {"reason": reason, "error": reason})


def grader_events(recorder: Recorder, result: PlanResult) -> None:
    """Code-execution records first, then captures and listings in declaration order, then
    the custom-script evaluator's record."""
    for run in result.tests:
        recorder.add(event_types.CODE_EXECUTED, record(run).to_event_payload())
    for check in result.checks:
        if isinstance(check, FileCapture):
            recorder.add(event_types.FILE_CAPTURED, file_captured(check))
        else:
            recorder.add(event_types.DIRECTORY_LISTED, directory_listed(check))
    if result.evaluator is not None:  # the Clawdiators layer's custom-script evaluator
        recorder.add(event_types.EVALUATOR_COMPLETED, evaluator_completed(result.evaluator))


def file_captured(capture: FileCapture) -> dict[str, Any]:
    return payloads.file_captured(capture.key, capture.path, capture.exists,
                                       capture.size, text(capture.content or b""),
                                       capture.truncated)


def directory_listed(listing: DirectoryListing) -> dict[str, Any]:
    """The listing's event, with its cut and its error: a listing that hides either reads
    as a whole one, and ``forbidden_files`` would pass on what it never saw."""
    entries = ((e.path, e.size, e.is_dir) for e in listing.entries)
    return payloads.directory_listed(listing.key, listing.path, entries, listing.truncated,
                                     listing.max_entries, dropped=listing.dropped,
                                     error=listing.error or "")


def evaluator_completed(done: EvaluatorRecord) -> dict[str, Any]:
    return payloads.evaluator_completed(
        done.runtime, done.exit_code, stdout=done.stdout, stderr=done.stderr,
        timed_out=done.timed_out, error=done.error, truncated=done.truncated,
        timeout_ms=done.timeout_ms, duration_ms=round(done.duration_s * 1000, 3))
