"""The worker's grader events, decoded as AgentClash's Go structs decode them.

``grader.verification.file_captured``, ``…directory_listed`` and ``…code_executed`` are
read with ``json.Unmarshal`` into ``FileCaptureResult``, ``DirectoryListingResult`` and
``CodeExecutionResult`` (``post_execution.go``, ``code_execution.go``): unknown keys are
ignored, a missing or ``null`` field keeps its zero value, and a field of the wrong JSON
type makes Go drop the **whole event** (``exists: "yes"`` is no capture at all). An event
without its key is dropped too.
"""

from __future__ import annotations

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
    return {**values, "entries": [row.values for row in rows]}


def code_execution(payload: Any) -> dict[str, Any] | None:
    """A ``CodeExecutionResult``, or None as for :func:`capture`."""
    decoded = lenient.decode(payload, "CodeExecutionResult", CODE_EXECUTION)
    return decoded.values if decoded.error is None and decoded.values["validator_key"] else None
