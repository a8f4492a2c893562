"""Builders for Clawdiators-layer tests: a spec with the layer, run events."""

from __future__ import annotations

import json
from typing import Any

from evalfleet.scoring.spec.models import EvaluationSpec

T0 = "2026-01-01T00:00:00+00:00"
VALIDATOR = {"key": "answer", "type": "exact_match", "target": "final_output",
             "expected_from": "literal:42"}


def layer_spec(dimensions: list[Any], clawdiators: dict[str, Any] | None = None,
               **extra: Any) -> EvaluationSpec:
    """A deterministic spec with the layer block (empty unless given)."""
    body: dict[str, Any] = {
        "name": "claw", "version_number": 1, "judge_mode": "deterministic",
        "validators": [VALIDATOR], "scorecard": {"dimensions": dimensions},
        "clawdiators": clawdiators or {}, **extra}
    return EvaluationSpec.model_validate(body)


def at(seconds: float) -> str:
    """An ISO time ``seconds`` after T0."""
    return f"2026-01-01T00:{int(seconds) // 60:02d}:{seconds % 60:06.3f}+00:00"


def run(final_output: str = "42", seconds: float = 10.0, *, calls: int = 0,
        tokens: tuple[int, int] = (0, 0)) -> list[dict[str, Any]]:
    """A run of ``seconds`` with ``calls`` model calls sharing ``tokens`` (in, out)."""
    events: list[dict[str, Any]] = [
        {"type": "system.run.started", "sequence_number": 1, "occurred_at": at(0), "payload": {}}]
    for i in range(calls):
        usage = {"input_tokens": tokens[0] // calls, "output_tokens": tokens[1] // calls}
        events.append({"type": "model.call.completed", "sequence_number": 2 + i,
                       "occurred_at": at(1 + i * 0.01),
                       "payload": {"provider_key": "openai", "provider_model_id": "gpt-4o",
                                   "usage": usage}})
    events.append({"type": "system.run.completed", "sequence_number": 100,
                   "occurred_at": at(seconds), "payload": {"final_output": final_output}})
    return events


def evaluator_event(stdout: str = "", **fields: Any) -> dict[str, Any]:
    """A ``grader.evaluator.completed`` event."""
    payload = {"runtime": "python", "exit_code": 0, "stdout": stdout, "stderr": "",
               "timed_out": False, "error": "", "timeout_ms": 60000, **fields}
    return {"type": "grader.evaluator.completed", "sequence_number": 200,
            "occurred_at": at(11), "payload": payload}


def manifest_event(**files: int) -> dict[str, Any]:
    """A ``grader.submission.manifest`` event (path → size; ``__`` stands for ``/``)."""
    entries = [{"path": p.replace("__", "/"), "size": s} for p, s in files.items()]
    return {"type": "grader.submission.manifest", "sequence_number": 201,
            "occurred_at": at(11), "payload": {"files": entries}}


def scores(**values: Any) -> str:
    """One JSON scores line."""
    return json.dumps({"scores": values, "details": {}})
