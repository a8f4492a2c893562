"""A sandbox's :class:`~sandbox.plan.PlanResult` as AgentClash events (the run's evidence).

When the request carries the agent's own events, they tell the ``system.run.*`` story and
the worker adds only sandbox and grader events; otherwise the worker writes
``system.run.started``/``completed`` from the commands it ran.
"""

from __future__ import annotations

from dataclasses import asdict
from datetime import datetime, timedelta
from typing import Any

from sandbox.execution import CodeExecutionRecord
from sandbox.plan import PlanResult
from sandbox.results import DirectoryListing, ExecResult, FileCapture
from scoring.run import event_types


class Recorder:
    """Appends events with increasing sequence numbers after the platform's own."""

    def __init__(self, events: list[dict[str, Any]], now: datetime) -> None:
        self.events = [dict(e) for e in events]
        numbers = [e.get("sequence_number") for e in self.events]
        self.next = max([n for n in numbers if isinstance(n, int)] + [len(self.events)]) + 1
        self.now = now

    def add(self, event_type: str, payload: dict[str, Any],
            at: datetime | None = None) -> None:
        self.events.append({"type": event_type, "sequence_number": self.next,
                            "occurred_at": (at or self.now).isoformat(), "payload": payload})
        self.next += 1


def text(data: bytes | None) -> str:
    """Sandbox bytes as event text (invalid UTF-8 replaced, as Go's JSON encoder does)."""
    return (data or b"").decode("utf-8", "replace")


def command_events(recorder: Recorder, result: PlanResult) -> None:
    for index, outcome in enumerate(result.commands):
        if not outcome.ok:
            recorder.add(event_types.COMMAND_FAILED, _command_payload(index, outcome))


def _command_payload(index: int, outcome: ExecResult) -> dict[str, Any]:
    return {"command_index": index, "exit_code": outcome.exit_code,
            "timed_out": outcome.timed_out, "oom_killed": outcome.oom_killed,
            "stdout": text(outcome.stdout), "stderr": text(outcome.stderr),
            "stdout_truncated": outcome.stdout_truncated,
            "stderr_truncated": outcome.stderr_truncated,
            "duration_ms": round(outcome.duration_s * 1000, 3), "error": outcome.error or ""}


def run_story(recorder: Recorder, started: datetime, result: PlanResult,
              final_output: str | None) -> None:
    """``system.run.started``/``completed`` from the commands the worker ran."""
    latency_ms = int(sum(c.duration_s for c in result.commands) * 1000)
    recorder.add(event_types.RUN_STARTED, {}, started)
    payload: dict[str, Any] = {"latency_ms": latency_ms}
    if final_output is not None:
        payload["final_output"] = final_output
    recorder.add(event_types.RUN_COMPLETED, payload, started + timedelta(milliseconds=latency_ms))


def grader_events(recorder: Recorder, result: PlanResult) -> None:
    """Code-execution records first, then captures and listings in declaration order, then
    the custom-script evaluator's record."""
    for record in result.tests:
        recorder.add(event_types.CODE_EXECUTED, code_executed(record))
    for check in result.checks:
        if isinstance(check, FileCapture):
            recorder.add(event_types.FILE_CAPTURED, file_captured(check))
        else:
            recorder.add(event_types.DIRECTORY_LISTED, directory_listed(check))
    if result.evaluator is not None:  # the Clawdiators layer's custom-script evaluator
        recorder.add(event_types.EVALUATOR_COMPLETED, result.evaluator.to_event_payload())


def code_executed(record: CodeExecutionRecord) -> dict[str, Any]:
    return {
        "validator_key": record.validator_key, "target": record.target,
        "target_path": record.target_path, "test_command": record.test_command,
        "timeout_ms": record.timeout_ms, "exit_code": record.exit_code,
        "stdout": record.stdout, "stderr": record.stderr, "timed_out": record.timed_out,
        "execution_error": record.execution_error, "passed_tests": record.passed_tests,
        "failed_tests": record.failed_tests, "error_tests": record.error_tests,
        "total_tests": record.total_tests, "pass_threshold": record.pass_threshold,
        "scoring": record.scoring,
        "test_cases": [asdict(t) for t in record.test_cases],
    }


def file_captured(capture: FileCapture) -> dict[str, Any]:
    payload: dict[str, Any] = {"key": capture.key, "path": capture.path,
                               "exists": capture.exists, "size": capture.size}
    if capture.exists:
        payload["content"] = text(capture.content)
    if capture.truncated:
        payload["truncated"] = True
    return payload


def directory_listed(listing: DirectoryListing) -> dict[str, Any]:
    entries = [{"path": e.path, "size": e.size, **({"is_dir": True} if e.is_dir else {})}
               for e in listing.entries]
    payload: dict[str, Any] = {"key": listing.key, "path": listing.path, "entries": entries}
    if listing.truncated:
        payload.update(truncated=True, max_entries=listing.max_entries)
    return payload
