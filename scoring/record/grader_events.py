"""The events the worker writes about the sandbox's work: their payloads, written here
(by :mod:`tasks.evaluation.recording`) and read here (by :mod:`scoring.record.evidence`).

Reading follows AgentClash's Go structs: ``grader.verification.file_captured``,
``…directory_listed`` and ``…code_executed`` are read with ``json.Unmarshal`` into
``FileCaptureResult``, ``DirectoryListingResult`` and ``CodeExecutionResult``
(``post_execution.go``, ``code_execution.go``): unknown keys are ignored, a missing or
``null`` field keeps its zero value, and a field of the wrong JSON type makes Go drop the
**whole event** (``exists: "yes"`` is no capture at all). An event without its key is
dropped too.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..compat import lenient

CAPTURE: lenient.Fields = {
    "key": ("string", ""), "path": ("string", ""), "exists": ("bool", False),
    "content": ("string", ""), "size": ("int64", 0), "truncated": ("bool", False)}
LISTING: lenient.Fields = {"key": ("string", ""), "path": ("string", ""), "entries": ("raw", None)}
ENTRY: lenient.Fields = {"path": ("string", ""), "size": ("int64", 0), "is_dir": ("bool", False)}
CODE_EXECUTION: lenient.Fields = {
    "validator_key": ("string", ""), "target": ("string", ""), "target_path": ("string", ""),
    "test_command": ("string", ""), "timeout_ms": ("int64", 0), "exit_code": ("int64", None),
    "stdout": ("string", ""), "stderr": ("string", ""), "timed_out": ("bool", False),
    "execution_error": ("string", ""), "passed_tests": ("int64", None),
    "failed_tests": ("int64", None), "error_tests": ("int64", None),
    "total_tests": ("int64", None), "pass_threshold": ("float64", None),
    "scoring": ("string", "")}


def capture(payload: Any) -> dict[str, Any] | None:
    """A ``FileCaptureResult``, or None when Go would not decode it (or it has no key)."""
    decoded = lenient.decode(payload, "FileCaptureResult", CAPTURE)
    return decoded.values if decoded.error is None and decoded.values["key"] else None


def listing(payload: Any) -> dict[str, Any] | None:
    """A ``DirectoryListingResult`` (entries decoded too), or None as for :func:`capture`."""
    decoded = lenient.decode(payload, "DirectoryListingResult", LISTING)
    values = decoded.values
    entries = values["entries"]
    if decoded.error is not None or not values["key"] or \
            (entries is not None and not isinstance(entries, list)):
        return None
    rows = [lenient.decode(entry, "DirectoryEntry", ENTRY) for entry in entries or []]
    if any(row.error is not None for row in rows):
        return None
    return {**values, "entries": [row.values for row in rows], **listing_gaps(payload)}


def listing_gaps(payload: dict[str, Any]) -> dict[str, Any]:
    """evalfleet's own fields of a listing that does not show every entry (AgentClash's
    listings have no cap): ``truncated``, ``dropped`` (entries left out) and ``error`` (it
    failed), each only when set and of its type."""
    gaps: dict[str, Any] = {}
    if payload.get("truncated") is True:
        gaps["truncated"] = True
    dropped = payload.get("dropped")
    if isinstance(dropped, int) and not isinstance(dropped, bool) and dropped > 0:
        gaps["dropped"] = dropped
    error = payload.get("error")
    if isinstance(error, str) and error:
        gaps["error"] = error
    return gaps


def code_execution(payload: Any) -> dict[str, Any] | None:
    """A ``CodeExecutionResult``, or None as for :func:`capture`."""
    decoded = lenient.decode(payload, "CodeExecutionResult", CODE_EXECUTION)
    return decoded.values if decoded.error is None and decoded.values["validator_key"] else None


# The payloads the worker writes, in the field order AgentClash's structs declare. Each one
# decodes back through the readers above (tests/unit/scoring/test_grader_events.py).

def file_captured(key: str, path: str, exists: bool, size: int, content: str,
                  truncated: bool) -> dict[str, Any]:
    """A ``grader.verification.file_captured`` payload (``content`` only when the file
    exists, ``truncated`` only when cut)."""
    payload: dict[str, Any] = {"key": key, "path": path, "exists": exists, "size": size}
    if exists:
        payload["content"] = content
    if truncated:
        payload["truncated"] = True
    return payload


def directory_listed(key: str, path: str, entries: Iterable[tuple[str, int, bool]],
                     truncated: bool, max_entries: int, *, dropped: int = 0,
                     error: str = "") -> dict[str, Any]:
    """A ``grader.verification.directory_listed`` payload: ``(path, size, is_dir)``
    entries (``is_dir`` written only when true); then evalfleet's own, each only when set:
    ``truncated`` with the cap, the entries ``dropped``, the ``error`` it failed with."""
    rows = [{"path": p, "size": size, **({"is_dir": True} if is_dir else {})}
            for p, size, is_dir in entries]
    payload: dict[str, Any] = {"key": key, "path": path, "entries": rows}
    if truncated:
        payload.update(truncated=True, max_entries=max_entries)
    if dropped:
        payload["dropped"] = dropped
    if error:
        payload["error"] = error
    return payload


def code_executed(fields: Mapping[str, Any],
                  test_cases: Iterable[Mapping[str, str]] = ()) -> dict[str, Any]:
    """A ``grader.verification.code_executed`` payload: exactly the fields of
    :data:`CODE_EXECUTION` (taken from ``fields``), then evalfleet's per-test verdicts."""
    return {**{name: fields[name] for name in CODE_EXECUTION},
            "test_cases": [dict(case) for case in test_cases]}


def command_failed(index: int, exit_code: int | None, *, timed_out: bool, oom_killed: bool,
                   stdout: str, stderr: str, stdout_truncated: bool, stderr_truncated: bool,
                   duration_ms: float, error: str) -> dict[str, Any]:
    """A ``sandbox.command.failed`` payload (one of the candidate's commands)."""
    return {"command_index": index, "exit_code": exit_code, "timed_out": timed_out,
            "oom_killed": oom_killed, "stdout": stdout, "stderr": stderr,
            "stdout_truncated": stdout_truncated, "stderr_truncated": stderr_truncated,
            "duration_ms": duration_ms, "error": error}


def submission_refused(path: str, reason: str) -> dict[str, Any]:
    """A ``grader.submission.refused`` payload (evalfleet's): the submission's file the
    sandbox could not hold (``""`` when the sandbox did not say which), and why."""
    return {"path": path, "reason": reason}


#: The reason of a ``grader.submission.refused`` event that gives none as text.
UNHELD = "the sandbox could not hold the submission's files"


def refusal(payload: Any) -> str:
    """The reason a ``grader.submission.refused`` payload gives (:data:`UNHELD` without
    one): whatever it holds, the event books the run as the candidate's loss."""
    reason = payload.get("reason") if isinstance(payload, dict) else None
    return reason if isinstance(reason, str) and reason.strip() else UNHELD


def evaluator_completed(runtime: str, exit_code: int | None, *, stdout: str, stderr: str,
                        timed_out: bool, error: str, truncated: bool, timeout_ms: int,
                        duration_ms: float) -> dict[str, Any]:
    """A ``grader.evaluator.completed`` payload (the Clawdiators layer's script)."""
    return {"runtime": runtime, "exit_code": exit_code, "stdout": stdout, "stderr": stderr,
            "timed_out": timed_out, "error": error, "truncated": truncated,
            "timeout_ms": timeout_ms, "duration_ms": duration_ms}
