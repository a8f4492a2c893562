"""Evidence: what a run's events say happened (scoring-semantics §4.2).

One pass over the ordered events fills an :class:`Evidence`; validators, metrics and
behavioral signals read only this.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from .cases import Case
from .events import Event, order_events
from .textform import canonical_json, loose_string

CASE_WARNINGS = {
    0: "challenge input set is unavailable",
    2: "challenge input is ambiguous across multiple items",
}


@dataclass(frozen=True)
class ToolCall:
    """One entry of the tool-call trace."""

    name: str
    arguments: str
    """Canonical JSON (sorted keys, compact) of the call's arguments; ``{}`` if missing."""
    failed: bool
    failure_origin: str = ""
    error_message: str = ""

    @property
    def signature(self) -> tuple[str, str]:
        """Name and canonical arguments: what makes two calls "the same call"."""
        return (self.name, self.arguments)


@dataclass
class Turn:
    """One turn of a multi-turn transcript."""

    index: int
    user: str = ""
    assistant: str = ""
    actor: str = ""
    phase_id: str = ""
    mismatch: bool = False


@dataclass
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0

    def add(self, usage: dict[str, Any]) -> None:
        self.input_tokens += _int(usage.get("input_tokens"))
        self.output_tokens += _int(usage.get("output_tokens"))
        self.total_tokens += _int(usage.get("total_tokens"))


USAGE_KEYS = ("input_tokens", "output_tokens", "total_tokens")


def _has_usage(usage: Any) -> bool:
    """True when a ``usage`` object carries at least one numeric token count."""
    return isinstance(usage, dict) and any(_maybe_int(usage.get(k)) is not None for k in USAGE_KEYS)


@dataclass
class Evidence:
    """Everything scoring knows about one run."""

    cases: list[Case] = field(default_factory=list)
    final_output: str | None = None
    started_at: datetime | None = None
    first_output_at: datetime | None = None
    terminal_at: datetime | None = None
    completed: bool | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    total_tokens: int | None = None
    tool_call_count: int | None = None
    tool_calls: list[ToolCall] = field(default_factory=list)
    failure_count: int = 0
    observed_models: list[tuple[str, str]] = field(default_factory=list)
    usage_by_model: dict[tuple[str, str], Usage] = field(default_factory=dict)
    race_context_tokens: int = 0
    captures: dict[str, dict[str, Any]] = field(default_factory=dict)
    listings: dict[str, dict[str, Any]] = field(default_factory=dict)
    code_executions: dict[str, dict[str, Any]] = field(default_factory=dict)
    turns: dict[int, Turn] = field(default_factory=dict)
    step_durations: dict[int, float] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    @property
    def case(self) -> Case | None:
        """The one case, when exactly one was supplied."""
        return self.cases[0] if len(self.cases) == 1 else None

    def observe_model(self, provider: str, model: str) -> None:
        if (provider or model) and (provider, model) not in self.observed_models:
            self.observed_models.append((provider, model))


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _int(value: Any) -> int:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0


def _maybe_int(value: Any) -> int | None:
    return _int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def extract_evidence(events: list[Event], cases: list[Case] | None = None) -> Evidence:
    """Build the evidence of a run from its events and the case(s) it was given."""
    evidence = Evidence(cases=list(cases or []))
    for event in order_events(events):
        handler = HANDLERS.get(event.type)
        if handler is not None:
            handler(evidence, event)
    _finish(evidence)
    return evidence


def _run_started(ev: Evidence, event: Event) -> None:
    if ev.started_at is None:
        ev.started_at = event.occurred_at


def _step(ev: Evidence, event: Event) -> None:
    index = event.payload.get("step_index")
    duration = event.payload.get("duration_ms")
    if isinstance(index, int) and isinstance(duration, int | float):
        ev.step_durations[index] = float(duration)


def _first_output(ev: Evidence, event: Event) -> None:
    if ev.first_output_at is None:
        ev.first_output_at = event.occurred_at


def _output_finalized(ev: Evidence, event: Event) -> None:
    _first_output(ev, event)
    if ev.final_output is None:
        ev.final_output = _final_output(event.payload, fallback_key="output")


def _final_output(payload: dict[str, Any], fallback_key: str | None = None) -> str | None:
    output = loose_string(payload.get("final_output"))
    if output is None and fallback_key:
        output = loose_string(payload.get(fallback_key))
    return output


def _run_completed(ev: Evidence, event: Event) -> None:
    payload = event.payload
    ev.terminal_at, ev.completed = event.occurred_at, True
    output = _final_output(payload)
    if output is not None:
        ev.final_output = output
    usage = _object(payload.get("usage"))
    for name in ("input_tokens", "output_tokens", "total_tokens"):
        count = _maybe_int(payload.get(name))
        count = count if count is not None else _maybe_int(usage.get(name))
        if count is not None:
            setattr(ev, name, count)
    calls = _maybe_int(payload.get("tool_call_count"))
    if calls is not None:
        ev.tool_call_count = calls
    latency = _maybe_int(payload.get("latency_ms"))  # Go: time.Duration(value) truncates
    if latency is not None and ev.started_at is not None:
        ev.terminal_at = ev.started_at + timedelta(milliseconds=latency)


def _run_failed(ev: Evidence, event: Event) -> None:
    ev.terminal_at, ev.completed = event.occurred_at, False
    ev.failure_count += 1


def _tool_call(ev: Evidence, event: Event) -> None:
    payload = event.payload
    name = payload.get("tool_name")
    if not isinstance(name, str) or not name.strip():
        if event.type == "tool.call.failed":
            ev.failure_count += 1
        return
    result = _object(payload.get("result"))
    failed = event.type == "tool.call.failed" or result.get("is_error") is True
    origin = payload.get("failure_origin")
    call = ToolCall(name=name.strip(), arguments=_canonical_arguments(payload.get("arguments")),
                    failed=failed, failure_origin=origin.strip() if isinstance(origin, str) else "",
                    error_message=_error_message(result.get("content")) if failed else "")
    ev.tool_calls.append(call)
    ev.failure_count += 1 if failed else 0


def _canonical_arguments(arguments: Any) -> str:
    """Sorted compact JSON of the arguments; ``{}`` when missing or not JSON to Go.

    Go cannot decode ``NaN``/``Infinity`` or an out-of-range number: such arguments are
    ``{}`` there, and must not raise here (they are the candidate's output).
    """
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            arguments = None
    if not isinstance(arguments, dict):
        return "{}"
    try:
        return canonical_json(arguments)
    except ValueError:
        return "{}"


def _error_message(content: Any) -> str:
    """``result.content`` as a loose string; a JSON object in it yields its ``error``."""
    text = loose_string(content)
    if text is None:
        return ""
    try:
        decoded = json.loads(text)
    except ValueError:
        return text.strip()
    error = loose_string(decoded.get("error")) if isinstance(decoded, dict) else None
    return (error if error is not None else text).strip()


def _sandbox_failed(ev: Evidence, event: Event) -> None:
    ev.failure_count += 1


def _model_call_completed(ev: Evidence, event: Event) -> None:
    payload = event.payload
    provider = str(payload.get("provider_key") or "")
    model = str(payload.get("provider_model_id") or payload.get("model") or "")
    ev.observe_model(provider, model)
    usage = payload.get("usage")
    if isinstance(usage, dict) and _has_usage(usage):
        ev.usage_by_model.setdefault((provider, model), Usage()).add(usage)


def _model_call_started(ev: Evidence, event: Event) -> None:
    payload = event.payload
    model = str(payload.get("model") or payload.get("provider_model_id") or "")
    ev.observe_model(str(payload.get("provider_key") or ""), model)


def _race_standings(ev: Evidence, event: Event) -> None:
    ev.race_context_tokens += _int(event.payload.get("tokens_added"))


def _keyed(store: str, *keys: str) -> Any:
    def handler(ev: Evidence, event: Event) -> None:
        key = next((event.payload[k] for k in keys if event.payload.get(k)), None)
        if isinstance(key, str):
            getattr(ev, store)[key] = event.payload

    return handler


def _turn(ev: Evidence, event: Event) -> None:
    payload = event.payload
    index = _turn_index(payload.get("turn_index"))
    if index is None:
        return
    turn = ev.turns.setdefault(index, Turn(index=index))
    content = loose_string(payload.get("content")) or ""
    actor = str(payload.get("actor") or "")
    if event.type == "turn.user.message":
        turn.user, turn.actor = content, actor or turn.actor
    elif event.type == "turn.assistant.message":
        turn.assistant = content
    else:  # turn.completed: its mismatch flag is the turn's verdict (true or false)
        if isinstance(payload.get("mismatch"), bool):
            turn.mismatch = payload["mismatch"]
        turn.actor = turn.actor or actor
    turn.phase_id = str(payload.get("phase_id") or turn.phase_id)


def _turn_index(value: Any) -> int | None:
    """A JSON number that is a whole number (Go decodes 1.0 as 1), else None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return int(value) if float(value).is_integer() else None


def _finish(ev: Evidence) -> None:
    _tokens_from_calls(ev)
    if ev.tool_call_count is None and ev.tool_calls:
        ev.tool_call_count = len(ev.tool_calls)
    if ev.final_output is None:
        ev.warnings.append("final output evidence is unavailable")
    if ev.terminal_at is None:
        ev.warnings.append("terminal run evidence is unavailable")
    ev.warnings.extend(_case_warnings(ev.cases))


def _tokens_from_calls(ev: Evidence) -> None:
    """Fill each run-level count the run summary did not give from the per-call sums."""
    if not ev.usage_by_model:
        return
    rows = list(ev.usage_by_model.values())
    if ev.input_tokens is None:
        ev.input_tokens = sum(u.input_tokens for u in rows)
    if ev.output_tokens is None:
        ev.output_tokens = sum(u.output_tokens for u in rows)
    if ev.total_tokens is None:
        total = sum(u.total_tokens for u in rows)
        ev.total_tokens = total or ev.input_tokens + ev.output_tokens
    for usage in rows:
        if usage.total_tokens == 0:
            usage.total_tokens = usage.input_tokens + usage.output_tokens


def _case_warnings(cases: list[Case]) -> list[str]:
    if len(cases) != 1:
        return [CASE_WARNINGS[min(len(cases), 2)]]
    payload = cases[0].payload
    empty = payload is None or (isinstance(payload, str) and not payload.strip())
    return ["challenge input payload is empty"] if empty else []


HANDLERS = {
    "system.run.started": _run_started,
    "system.step.started": _step,
    "system.step.completed": _step,
    "model.output.delta": _first_output,
    "system.output.finalized": _output_finalized,
    "system.run.completed": _run_completed,
    "system.run.failed": _run_failed,
    "tool.call.completed": _tool_call,
    "tool.call.failed": _tool_call,
    "sandbox.command.failed": _sandbox_failed,
    "model.call.completed": _model_call_completed,
    "model.call.started": _model_call_started,
    "race.standings.injected": _race_standings,
    "grader.verification.file_captured": _keyed("captures", "key"),
    "grader.verification.directory_listed": _keyed("listings", "key"),
    "grader.verification.code_executed": _keyed("code_executions", "validator_key"),
    "turn.user.message": _turn,
    "turn.assistant.message": _turn,
    "turn.completed": _turn,
}
