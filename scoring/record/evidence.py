"""Evidence: what a run's events say happened (docs/scoring.md §4.2).

One pass over the ordered events fills an :class:`Evidence`; validators, metrics and
behavioral signals read only this.
"""

from __future__ import annotations

import contextlib
import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from ..compat.textform import canonical_json, loose_string
from ..compat.textnorm import trim
from ..spec.cases import Case
from . import event_types, grader_events
from .events import Event, order_events
from .transcript import Turn, build_turns

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
    sequence: int = 0
    """The event's sequence number (0 when it has none)."""
    event_type: str = ""

    @property
    def signature(self) -> tuple[str, str]:
        """Name and canonical arguments: what makes two calls "the same call"."""
        return (self.name, self.arguments)


@dataclass
class Usage:
    """Token counts of one (provider, model), as float64 like AgentClash's ``pricedUsage``."""

    input_tokens: float = 0.0
    output_tokens: float = 0.0
    total_tokens: float = 0.0

    def add(self, usage: dict[str, Any]) -> None:
        self.input_tokens += number(usage.get("input_tokens")) or 0.0
        self.output_tokens += number(usage.get("output_tokens")) or 0.0
        self.total_tokens += number(usage.get("total_tokens")) or 0.0


USAGE_KEYS = ("input_tokens", "output_tokens", "total_tokens")


def _has_usage(usage: Any) -> bool:
    """True when a ``usage`` object carries at least one numeric token count."""
    return isinstance(usage, dict) and any(number(usage.get(k)) is not None for k in USAGE_KEYS)


@dataclass
class Evidence:
    """Everything scoring knows about one run."""

    cases: list[Case] = field(default_factory=list)
    final_output: str | None = None
    started_at: datetime | None = None
    first_output_at: datetime | None = None
    terminal_at: datetime | None = None
    completed: bool | None = None
    input_tokens: float | None = None
    output_tokens: float | None = None
    total_tokens: float | None = None
    tool_call_count: float | None = None
    tool_calls: list[ToolCall] = field(default_factory=list)
    failure_count: int = 0
    observed_models: list[tuple[str, str]] = field(default_factory=list)
    usage_by_model: dict[tuple[str, str], Usage] = field(default_factory=dict)
    race_context_tokens: float = 0.0
    captures: dict[str, dict[str, Any]] = field(default_factory=dict)
    listings: dict[str, dict[str, Any]] = field(default_factory=dict)
    code_executions: dict[str, dict[str, Any]] = field(default_factory=dict)
    turns: list[Turn] = field(default_factory=list)
    refused: str | None = None
    """Why the sandbox could not hold the submission's files (evalfleet's
    ``grader.submission.refused``): the run is the candidate's loss (docs/scoring.md §18)."""
    step_durations: dict[int, float] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    sources: dict[tuple[str, str], tuple[int, str]] = field(default_factory=dict)
    """Replay pointers ``(sequence, event type)``: ``("final_output", "")`` for the
    finalized output, ``("model_call", "")`` for the last model call, and ``(store, key)``
    for grader events. Only events with a positive sequence number give one."""

    @property
    def case(self) -> Case | None:
        """The one case, when exactly one was supplied."""
        return self.cases[0] if len(self.cases) == 1 else None

    _models_seen: set[tuple[str, str]] = field(default_factory=set, repr=False, compare=False)
    """:attr:`observed_models` as a set: a list searched for each of 300,000 models took
    minutes (found by a red-team pass)."""

    def observe_model(self, provider: str, model: str) -> None:
        if (provider or model) and (provider, model) not in self._models_seen:
            self._models_seen.add((provider, model))
            self.observed_models.append((provider, model))


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def number(value: Any) -> float | None:
    """A JSON number as Go's ``anyNumber`` reads it (a float64), else None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        return float(value)
    except OverflowError:  # an integer past float64 (Go's decoder refuses one): ±Inf
        return float("inf") if value > 0 else float("-inf")


def over_limit(used: float | None, limit: float) -> bool:
    """Whether a run's reported use passes ``limit``. NaN (``inf - inf`` tokens, ``0 × inf``
    cost) passes every limit, where a comparison would let it through (found by a red-team
    pass)."""
    return used is not None and (used > limit or math.isnan(used))


def extract_evidence(events: list[Event], cases: list[Case] | None = None) -> Evidence:
    """Build the evidence of a run from its events and the case(s) it was given."""
    evidence = Evidence(cases=list(cases or []))
    ordered = order_events(events)
    for event in ordered:
        handler = HANDLERS.get(event.type)
        if handler is not None:
            handler(evidence, event)
    _finish(evidence)
    evidence.turns = build_turns(ordered)
    return evidence


def _run_started(ev: Evidence, event: Event) -> None:
    if ev.started_at is None:
        ev.started_at = event.occurred_at


def _step(ev: Evidence, event: Event) -> None:
    index = event.payload.get("step_index")
    duration = event.payload.get("duration_ms")
    milliseconds = number(duration)
    if isinstance(index, int) and milliseconds is not None:
        ev.step_durations[index] = milliseconds


def _first_output(ev: Evidence, event: Event) -> None:
    if ev.first_output_at is None:
        ev.first_output_at = event.occurred_at


def _output_finalized(ev: Evidence, event: Event) -> None:
    _first_output(ev, event)
    if ev.final_output is None:
        ev.final_output = _final_output(event.payload, fallback_key="output")
        if ev.final_output is not None:
            _point(ev, ("final_output", ""), event)


def _point(ev: Evidence, name: tuple[str, str], event: Event) -> None:
    """Record ``event`` as the replay pointer ``name`` (sequenced events only)."""
    if event.sequence_number and event.sequence_number > 0:
        ev.sources[name] = (event.sequence_number, event.type)


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
        count = number(payload.get(name))
        if count is not None:
            setattr(ev, name, count)
    calls = number(payload.get("tool_call_count"))
    if calls is not None:
        ev.tool_call_count = calls
    for name in ("input_tokens", "output_tokens", "total_tokens"):
        count = number(usage.get(name))
        if count is not None and getattr(ev, name) is None:
            setattr(ev, name, count)
    latency = number(payload.get("latency_ms"))
    if latency is not None and ev.started_at is not None:
        with contextlib.suppress(OverflowError):  # past year 9999 (Go's time goes on):
            ev.terminal_at = ev.started_at + _duration_ms(latency)  # no terminal time


def _duration_ms(value: float) -> timedelta:
    """Go's ``time.Duration(value) * time.Millisecond``: the float truncated to whole ms,
    times 10⁶ ns in int64 arithmetic, which wraps (so the result stays within ±292 years,
    as Go's does, however large the latency an event claims)."""
    whole = int(value) if abs(value) < 2**63 else 0
    nanos = (whole * 1_000_000 + 2**63) % 2**64 - 2**63
    return timedelta(microseconds=nanos // 1000)


def _run_failed(ev: Evidence, event: Event) -> None:
    ev.terminal_at, ev.completed = event.occurred_at, False
    ev.failure_count += 1


def _tool_call(ev: Evidence, event: Event) -> None:
    """``buildToolCallTraceEntry``: a call needs a (loose string) non-blank tool name."""
    payload = event.payload
    name = _text(payload, "tool_name").strip()
    if not name:
        if event.type == event_types.TOOL_CALL_FAILED:
            ev.failure_count += 1
        return
    result = _object(payload.get("result"))
    failed = event.type == event_types.TOOL_CALL_FAILED or result.get("is_error") is True
    call = ToolCall(name=name, arguments=_canonical_arguments(payload),
                    failed=failed, failure_origin=_text(payload, "failure_origin").strip(),
                    error_message=_error_message(result.get("content")),
                    sequence=event.sequence_number or 0, event_type=event.type)
    ev.tool_calls.append(call)
    ev.failure_count += 1 if failed else 0


def _canonical_arguments(payload: dict[str, Any]) -> str:
    """The arguments re-encoded as Go does (``normalizeToolCallArguments``): the JSON
    value as given (a string stays a string, an array an array), keys sorted, compact;
    ``{}`` when there are none."""
    if "arguments" not in payload:
        return "{}"
    try:
        return canonical_json(payload["arguments"])
    except ValueError:  # not JSON to Go (NaN, Infinity): Go's marshal fails, giving {}
        return "{}"


def _error_message(content: Any) -> str:
    """``result.content`` as a loose string; a JSON object in it yields its ``error``."""
    text = loose_string(content)
    if text is None:
        return ""
    try:
        decoded = json.loads(text)
    except (ValueError, RecursionError):  # nested past Python's stack: plain text
        return trim(text)
    error = loose_string(decoded.get("error")) if isinstance(decoded, dict) else None
    return trim(error if error is not None else text)


def _sandbox_failed(ev: Evidence, event: Event) -> None:
    ev.failure_count += 1


def _submission_refused(ev: Evidence, event: Event) -> None:
    if ev.refused is None:
        ev.refused = grader_events.refusal(event.payload)


def _text(payload: dict[str, Any], key: str) -> str:
    """Go's ``stringValue``: the loose string of ``payload[key]``, else ``""``."""
    return loose_string(payload.get(key)) or "" if key in payload else ""


def _model_call_completed(ev: Evidence, event: Event) -> None:
    _point(ev, ("model_call", ""), event)
    payload = event.payload
    provider = _text(payload, "provider_key")
    model = _text(payload, "provider_model_id") or _text(payload, "model")
    ev.observe_model(provider, model)
    usage = payload.get("usage")
    if isinstance(usage, dict) and _has_usage(usage):
        ev.usage_by_model.setdefault((provider, model), Usage()).add(usage)


def _model_call_started(ev: Evidence, event: Event) -> None:
    payload = event.payload
    model = _text(payload, "model") or _text(payload, "provider_model_id")
    ev.observe_model(_text(payload, "provider_key"), model)


def _race_standings(ev: Evidence, event: Event) -> None:
    ev.race_context_tokens += number(event.payload.get("tokens_added")) or 0.0


def _grader(store: str, decode: Callable[[Any], dict[str, Any] | None], key: str) -> Any:
    """Store a grader event by its key (the later wins), with its replay pointer."""
    def handler(ev: Evidence, event: Event) -> None:
        record = decode(event.payload)
        if record is not None:
            getattr(ev, store)[record[key]] = record
            if event.sequence_number and event.sequence_number > 0:
                ev.sources[(store, record[key])] = (event.sequence_number, event.type)

    return handler


def _finish(ev: Evidence) -> None:
    _tokens_from_calls(ev)
    if ev.tool_call_count is None and ev.tool_calls:
        ev.tool_call_count = float(len(ev.tool_calls))
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
        ev.total_tokens = total if total > 0 else ev.input_tokens + ev.output_tokens
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
    event_types.RUN_STARTED: _run_started,
    event_types.STEP_STARTED: _step,
    event_types.STEP_COMPLETED: _step,
    event_types.MODEL_OUTPUT_DELTA: _first_output,
    event_types.OUTPUT_FINALIZED: _output_finalized,
    event_types.RUN_COMPLETED: _run_completed,
    event_types.RUN_FAILED: _run_failed,
    event_types.TOOL_CALL_COMPLETED: _tool_call,
    event_types.TOOL_CALL_FAILED: _tool_call,
    event_types.COMMAND_FAILED: _sandbox_failed,
    event_types.SUBMISSION_REFUSED: _submission_refused,
    event_types.MODEL_CALL_COMPLETED: _model_call_completed,
    event_types.MODEL_CALL_STARTED: _model_call_started,
    "race.standings.injected": _race_standings,
    event_types.FILE_CAPTURED: _grader("captures", grader_events.capture, "key"),
    event_types.DIRECTORY_LISTED: _grader("listings", grader_events.listing, "key"),
    event_types.CODE_EXECUTED: _grader("code_executions",
                                                 grader_events.code_execution, "validator_key"),
}
