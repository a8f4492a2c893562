"""Hand-built sandbox verification and tool-call events (docs/scoring.md §4.2, §7.2, §7.3)."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

T0 = "2026-01-01T00:00:00Z"


def captured(key: str, content: str | None = None, *, exists: bool = True,
             path: str = "/workspace/out.txt", **extra: Any) -> dict[str, Any]:
    """A ``grader.verification.file_captured`` event (the capture's key is ``payload.key``)."""
    payload: dict[str, Any] = {"key": key, "path": path, "exists": exists,
                               "size": len((content or "").encode())}
    if content is not None:
        payload["content"] = content
    return {"type": "grader.verification.file_captured", "occurred_at": T0,
            "payload": payload | extra}


def listed(key: str, path: str, entries: list[Any]) -> dict[str, Any]:
    """A ``grader.verification.directory_listed`` event."""
    return {"type": "grader.verification.directory_listed", "occurred_at": T0,
            "payload": {"key": key, "path": path, "entries": entries}}


def executed(validator_key: str = "v", **result: Any) -> dict[str, Any]:
    """A ``grader.verification.code_executed`` event (keyed by ``payload.validator_key``)."""
    return {"type": "grader.verification.code_executed", "occurred_at": T0,
            "payload": {"validator_key": validator_key, "target": "file:code",
                        "test_command": "pytest -q", "timeout_ms": 30000, **result}}


def tool_call(name: str, arguments: Any = None, *, failed: bool = False,
              sequence: int | None = None) -> dict[str, Any]:
    """A ``tool.call.completed`` (or ``tool.call.failed``) event."""
    event_type = "tool.call.failed" if failed else "tool.call.completed"
    event: dict[str, Any] = {"type": event_type, "occurred_at": T0,
                             "payload": {"tool_name": name, "arguments": arguments or {},
                                         "result": {"is_error": False, "content": "ok"}}}
    if sequence is not None:
        event["sequence_number"] = sequence
    return event


def spec_body(*validators: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """A minimal spec document around validator declarations."""
    return {"name": "s", "version_number": 1, "judge_mode": "deterministic",
            "validators": list(validators), "scorecard": {"dimensions": ["correctness"]},
            **extra}


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner,
                                                               max_size=4),
    max_leaves=12,
)
"""Arbitrary decoded JSON values, for property tests."""
