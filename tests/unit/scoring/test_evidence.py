"""Evidence extraction from run events (docs/scoring.md §4.1–4.2)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from helpers import T0, evidence_of

from evalfleet.scoring.record.evidence import ToolCall

BASE = datetime(2026, 1, 1, tzinfo=UTC)


def at(ms: float) -> str:
    """ISO timestamp ``ms`` milliseconds after the base time."""
    return (BASE + timedelta(milliseconds=ms)).isoformat()


def event(type_: str, seq: int | None = None, ms: float = 0, **payload: Any) -> dict[str, Any]:
    """A raw event mapping."""
    raw: dict[str, Any] = {"type": type_, "occurred_at": at(ms), "payload": payload}
    if seq is not None:
        raw["sequence_number"] = seq
    return raw


def tool(name: Any, seq: int | None = None, *, failed: bool = False,
         **payload: Any) -> dict[str, Any]:
    """A tool-call event."""
    kind = "tool.call.failed" if failed else "tool.call.completed"
    return event(kind, seq, tool_name=name, **payload)


# --- §4.1 ordering -----------------------------------------------------------------------


@pytest.mark.parametrize(("events", "expected"), [
    ([tool("b", 2), tool("a", 1)], ["a", "b"]),
    ([tool("late", None), tool("first", 5)], ["first", "late"]),
    ([event("tool.call.completed", None, 20, tool_name="t2"),
      event("tool.call.completed", None, 10, tool_name="t1")], ["t1", "t2"]),
    ([event("tool.call.failed", None, 10, tool_name="f"),
      event("tool.call.completed", None, 10, tool_name="c")], ["c", "f"]),
    ([tool("zero", 0), tool("one", 1)], ["one", "zero"]),
    ([tool("neg", -3), tool("one", 1)], ["one", "neg"]),
])
def test_event_order(events: list[dict[str, Any]], expected: list[str]) -> None:
    """Sequenced events first by sequence, then the rest by time, ties by event type."""
    assert [c.name for c in evidence_of(events).tool_calls] == expected


# --- final output ------------------------------------------------------------------------


@pytest.mark.parametrize(("events", "expected"), [
    ([event("system.output.finalized", 1, final_output="a")], "a"),
    ([event("system.output.finalized", 1, output="o")], "o"),
    ([event("system.output.finalized", 1, final_output="a", output="o")], "a"),
    ([event("system.output.finalized", 1, final_output=7, output="o")], "o"),
    ([event("system.output.finalized", 1, final_output="a"),
      event("system.output.finalized", 2, final_output="b")], "a"),
    ([event("system.output.finalized", 1, final_output="a"),
      event("system.run.completed", 2, final_output="c")], "c"),
    ([event("system.run.completed", 1, final_output="c"),
      event("system.output.finalized", 2, final_output="late")], "c"),
    ([event("system.output.finalized", 1, final_output="a"),
      event("system.run.completed", 2)], "a"),
    ([event("system.run.completed", 1, final_output={"answer": "x", "other": 1})], "x"),
    ([event("system.run.completed", 1, final_output={"text": {"value": "deep"}})], "deep"),
    ([event("system.run.completed", 1, final_output=["only"])], "only"),
    ([event("system.run.completed", 1, final_output={"other": 1})], None),
    ([event("system.run.completed", 1, final_output=["a", "b"])], None),
    ([event("system.run.completed", 1, final_output=42)], None),
    ([event("system.run.completed", 1, final_output="")], ""),
])
def test_final_output(events: list[dict[str, Any]], expected: str | None) -> None:
    """finalized sets the output only once; run.completed overwrites; loose strings collapse."""
    assert evidence_of(events).final_output == expected


# --- times and completion ----------------------------------------------------------------


@pytest.mark.parametrize(("events", "start", "first", "terminal", "completed"), [
    ([event("system.run.started", 1, 0), event("system.run.completed", 2, 1500)],
     0, None, 1500, True),
    ([event("system.run.started", 1, 0), event("system.run.started", 2, 50),
      event("system.run.completed", 3, 100)], 0, None, 100, True),
    ([event("system.run.started", 1, 10), event("model.output.delta", 2, 30),
      event("system.output.finalized", 3, 40, final_output="x")], 10, 30, None, None),
    ([event("system.output.finalized", 1, 40, final_output="x"),
      event("model.output.delta", 2, 50)], None, 40, None, None),
    ([event("system.run.started", 1, 0), event("system.run.completed", 2, 9000, latency_ms=1200)],
     0, None, 1200, True),
    ([event("system.run.started", 1, 0), event("system.run.completed", 2, 9000, latency_ms=12.9)],
     0, None, 12, True),
    ([event("system.run.completed", 1, 9000, latency_ms=1200)], None, None, 9000, True),
    ([event("system.run.started", 1, 0), event("system.run.completed", 2, 900, latency_ms=True)],
     0, None, 900, True),
    ([event("system.run.started", 1, 0), event("system.run.failed", 2, 700)], 0, None, 700, False),
    ([event("system.run.failed", 1, 700), event("system.run.completed", 2, 800)],
     None, None, 800, True),
    ([event("system.run.completed", 1, 800), event("system.run.failed", 2, 900)],
     None, None, 900, False),
])
def test_times_and_completion(events: list[dict[str, Any]], start: float | None,
                              first: float | None, terminal: float | None,
                              completed: bool | None) -> None:
    """Start is the first run.started; latency_ms (truncated) moves the terminal time."""
    ev = evidence_of(events)

    def ms(moment: datetime | None) -> float | None:
        return None if moment is None else (moment - BASE) / timedelta(milliseconds=1)

    actual = (ms(ev.started_at), ms(ev.first_output_at), ms(ev.terminal_at), ev.completed)
    assert actual == (start, first, terminal, completed)


# --- tokens ------------------------------------------------------------------------------


def call_usage(provider: str, model: str, seq: int, **usage: Any) -> dict[str, Any]:
    """A model.call.completed event with usage."""
    return event("model.call.completed", seq, provider_key=provider, provider_model_id=model,
                 usage=usage)


@pytest.mark.parametrize(("events", "expected"), [
    ([event("system.run.completed", 1, input_tokens=10, output_tokens=5, total_tokens=15)],
     (10, 5, 15)),
    ([event("system.run.completed", 1, usage={"input_tokens": 1, "output_tokens": 2,
                                              "total_tokens": 3})], (1, 2, 3)),
    ([event("system.run.completed", 1, input_tokens=10, usage={"input_tokens": 99})],
     (10, None, None)),
    ([call_usage("openai", "gpt-4o", 1, input_tokens=3, output_tokens=4, total_tokens=7),
      call_usage("openai", "gpt-4o", 2, input_tokens=1, output_tokens=1, total_tokens=2)],
     (4, 5, 9)),
    ([call_usage("openai", "gpt-4o", 1, input_tokens=3, output_tokens=4)], (3, 4, 7)),
    ([call_usage("openai", "gpt-4o", 1, input_tokens=3, output_tokens=4),
      event("system.run.completed", 2, total_tokens=100)], (3, 4, 100)),
    ([call_usage("openai", "gpt-4o", 1, input_tokens=3, output_tokens=4, total_tokens=7),
      event("system.run.completed", 2, input_tokens=50, output_tokens=60, total_tokens=110)],
     (50, 60, 110)),
    ([call_usage("openai", "gpt-4o", 1)], (None, None, None)),
    ([event("system.run.completed", 1)], (None, None, None)),
])
def test_token_counts(events: list[dict[str, Any]],
                      expected: tuple[int | None, int | None, int | None]) -> None:
    """Run-level counts (top level, then usage.*) win; per-call sums fill each missing one."""
    ev = evidence_of(events)
    assert (ev.input_tokens, ev.output_tokens, ev.total_tokens) == expected


def test_usage_by_model_accumulates_per_provider_and_model() -> None:
    """Per-call usage is summed per (provider, model); a missing total becomes in + out."""
    ev = evidence_of([
        call_usage("openai", "gpt-4o", 1, input_tokens=3, output_tokens=4, total_tokens=7),
        call_usage("openai", "gpt-4o", 2, input_tokens=1, output_tokens=1, total_tokens=2),
        call_usage("anthropic", "claude-x", 3, input_tokens=10, output_tokens=20),
    ])
    rows = {k: (u.input_tokens, u.output_tokens, u.total_tokens)
            for k, u in ev.usage_by_model.items()}
    assert rows == {("openai", "gpt-4o"): (4, 5, 9), ("anthropic", "claude-x"): (10, 20, 30)}


@pytest.mark.parametrize(("events", "expected"), [
    ([event("model.call.completed", 1, provider_key="openai", provider_model_id="gpt-4o")],
     [("openai", "gpt-4o")]),
    ([event("model.call.completed", 1, provider_key="openai", model="gpt-4o-mini")],
     [("openai", "gpt-4o-mini")]),
    ([event("model.call.completed", 1, provider_key="p", provider_model_id="a", model="b")],
     [("p", "a")]),
    ([event("model.call.started", 1, provider_key="p", model="m", provider_model_id="x")],
     [("p", "m")]),
    ([event("model.call.started", 1, provider_key="p", provider_model_id="x")], [("p", "x")]),
    ([event("model.call.started", 1, provider_key="p", model="m"),
      event("model.call.completed", 2, provider_key="p", provider_model_id="m")], [("p", "m")]),
    ([event("model.call.completed", 1, usage={"input_tokens": 1})], []),
])
def test_observed_models(events: list[dict[str, Any]], expected: list[tuple[str, str]]) -> None:
    """Observed models come from call start/completion; blank provider and model are skipped."""
    assert evidence_of(events).observed_models == expected


def test_model_call_without_numeric_usage_is_not_usage() -> None:
    """A usage object with no numeric counts does not make per-call usage evidence."""
    ev = evidence_of([event("model.call.completed", 1, provider_key="p", provider_model_id="m",
                            usage={"input_tokens": "12"})])
    assert (ev.usage_by_model, ev.total_tokens) == ({}, None)


# --- tool trace and failure count --------------------------------------------------------


@pytest.mark.parametrize(("events", "expected"), [
    ([tool("read", 1, arguments={"b": 1, "a": [1, 2]})],
     ToolCall("read", '{"a":[1,2],"b":1}', False)),
    ([tool("read", 1)], ToolCall("read", "{}", False)),
    ([tool("read", 1, arguments="not json")], ToolCall("read", '"not json"', False)),
    ([tool("read", 1, arguments='{"z": 1, "a": "<"}')],
     ToolCall("read", '"{\\"z\\": 1, \\"a\\": \\"\\u003c\\"}"', False)),
    ([tool("read", 1, arguments=[2, 1])], ToolCall("read", "[2,1]", False)),
    ([tool("  read  ", 1)], ToolCall("read", "{}", False)),
    ([tool("x", 1, failed=True, failure_origin=" policy ", result={"content": "denied"})],
     ToolCall("x", "{}", True, "policy", "denied")),
    ([tool("x", 1, result={"is_error": True, "content": '{"error": " boom "}'})],
     ToolCall("x", "{}", True, "", "boom")),
    ([tool("x", 1, result={"is_error": True, "content": {"text": "tool is not allowed"}})],
     ToolCall("x", "{}", True, "", "tool is not allowed")),
    ([tool("x", 1, result={"is_error": "yes", "content": "ok"})],
     ToolCall("x", "{}", False, "", "ok")),
])
def test_tool_trace_entries(events: list[dict[str, Any]], expected: ToolCall) -> None:
    """Entries carry trimmed name, the arguments re-encoded as Go does (a JSON string stays
    a string: AgentClash does not parse it), failure flag, origin and error text."""
    calls = [replace(call, sequence=0, event_type="") for call in evidence_of(events).tool_calls]
    assert calls == [expected]


def test_tool_trace_entries_point_at_their_event() -> None:
    """A trace entry keeps its event's sequence number and type (the replay pointer)."""
    [call] = evidence_of([tool("read", 7)]).tool_calls
    assert (call.sequence, call.event_type) == (7, "tool.call.completed")


@pytest.mark.parametrize(("events", "trace_len", "failures"), [
    ([tool("a", 1), tool("b", 2)], 2, 0),
    ([tool("a", 1, failed=True)], 1, 1),
    ([tool("a", 1, result={"is_error": True})], 1, 1),
    ([tool("", 1, failed=True)], 0, 1),
    ([tool("  ", 1, failed=True)], 0, 1),
    ([tool(None, 1, failed=True)], 0, 1),
    ([tool("", 1)], 0, 0),
    ([event("sandbox.command.failed", 1)], 0, 1),
    ([event("system.run.failed", 1), tool("a", 2, failed=True),
      event("sandbox.command.failed", 3)], 1, 3),
])
def test_trace_and_failure_count(events: list[dict[str, Any]], trace_len: int,
                                 failures: int) -> None:
    """Failed entries, nameless tool failures, sandbox failures and run failures all count."""
    ev = evidence_of(events)
    assert (len(ev.tool_calls), ev.failure_count) == (trace_len, failures)


@pytest.mark.parametrize(("events", "expected"), [
    ([tool("a", 1), tool("b", 2)], 2),
    ([tool("a", 1), event("system.run.completed", 2, tool_call_count=9)], 9),
    ([event("system.run.completed", 1, tool_call_count=0)], 0),
    ([event("system.run.completed", 1)], None),
])
def test_tool_call_count(events: list[dict[str, Any]], expected: int | None) -> None:
    """The run summary's tool_call_count wins; otherwise the trace length (if any)."""
    assert evidence_of(events).tool_call_count == expected


# --- race tokens, captures, turns --------------------------------------------------------


def test_race_context_tokens_sum() -> None:
    """race.standings.injected events add their tokens_added."""
    ev = evidence_of([event("race.standings.injected", 1, tokens_added=40),
                      event("race.standings.injected", 2, tokens_added=2),
                      event("race.standings.injected", 3)])
    assert ev.race_context_tokens == 42


@pytest.mark.parametrize(("type_", "store", "key_field"), [
    ("grader.verification.file_captured", "captures", "key"),
    ("grader.verification.directory_listed", "listings", "key"),
    ("grader.verification.code_executed", "code_executions", "validator_key"),
])
def test_verification_events_keyed_later_overwrites(type_: str, store: str,
                                                    key_field: str) -> None:
    """Capture, listing and code-execution events are stored by key; later ones overwrite."""
    ev = evidence_of([event(type_, 1, **{key_field: "k", "path": "/a", "target": "a"}),
                      event(type_, 2, **{key_field: "k", "path": "/b", "target": "b"})])
    record = getattr(ev, store)["k"]
    assert record.get("path", record.get("target")) in ("/b", "b")


def test_transcript_turns() -> None:
    """Turn events build user/assistant content, actor, phase and the mismatch flag."""
    ev = evidence_of([
        event("turn.user.message", 1, turn_index=0, content="hi", actor="sim", phase_id="p1"),
        event("turn.assistant.message", 2, turn_index=0, content={"text": "hello"}),
        event("turn.completed", 3, turn_index=0, mismatch=True),
        event("turn.user.message", 4, turn_index=1, content="bye"),
        event("turn.completed", 5, content="no index"),
    ])
    first, second = ev.turns[0], ev.turns[1]
    summary = (first.user, first.assistant, first.actor, first.phase_id, first.mismatch)
    assert summary == ("hi", "hello", "sim", "p1", True)
    assert (second.user, second.mismatch, [t.index for t in ev.turns]) == ("bye", False, [0, 1])


# --- warnings ----------------------------------------------------------------------------


@pytest.mark.parametrize(("events", "cases", "expected"), [
    ([], [], ["final output evidence is unavailable", "terminal run evidence is unavailable",
              "challenge input set is unavailable"]),
    ([event("system.run.completed", 1, final_output="x")], [{"payload": {"q": 1}}], []),
    ([event("system.run.failed", 1)], [{"payload": {"q": 1}}],
     ["final output evidence is unavailable"]),
    ([event("system.output.finalized", 1, final_output="x")], [{"payload": {"q": 1}}],
     ["terminal run evidence is unavailable"]),
    ([event("system.run.completed", 1, final_output="x")],
     [{"payload": {"q": 1}}, {"payload": {"q": 2}}],
     ["challenge input is ambiguous across multiple items"]),
    ([event("system.run.completed", 1, final_output="x")], [{"payload": {}}], []),
    ([event("system.run.completed", 1, final_output="x")], [{"payload": None}],
     ["challenge input payload is empty"]),
    ([event("system.run.completed", 1, final_output="x")], [{"payload": " \n"}],
     ["challenge input payload is empty"]),
])
def test_evidence_warnings(events: list[dict[str, Any]], cases: list[dict[str, Any]],
                           expected: list[str]) -> None:
    """Missing final output / terminal evidence and case-count problems become warnings."""
    assert evidence_of(events, cases).warnings == expected


def test_turn_completed_can_clear_a_mismatch_and_only_fills_a_missing_actor() -> None:
    """turn.completed sets the turn's mismatch verdict (also back to false); the user
    message names the actor, turn.completed only when none was named."""
    events = [
        {"type": "turn.user.message", "occurred_at": T0,
         "payload": {"turn_index": 1.0, "content": "hi", "actor": "alice"}},
        {"type": "turn.completed", "occurred_at": T0,
         "payload": {"turn_index": 1, "mismatch": True, "actor": "bob"}},
        {"type": "turn.completed", "occurred_at": T0,
         "payload": {"turn_index": 1, "mismatch": False}},
        {"type": "turn.completed", "occurred_at": T0,
         "payload": {"turn_index": 2, "actor": "carol"}},
        {"type": "turn.user.message", "occurred_at": T0,
         "payload": {"turn_index": 2.5, "content": "truncated to turn 2"}},
    ]
    one, two = evidence_of(events).turns

    assert (one.index, two.index) == (1, 2)
    assert (one.actor, one.mismatch, one.user) == ("alice", False, "hi")
    assert (two.actor, two.user) == ("carol", "truncated to turn 2")


def test_a_step_duration_past_float64_does_not_raise() -> None:
    """A 400-digit ``duration_ms`` raised OverflowError (the run ended internal_error);
    the intake now refuses it, and a stored run holding one still scores."""
    evidence = evidence_of([event("system.step.completed", step_index=1,
                                  duration_ms=10 ** 400)])
    assert evidence.step_durations == {1: float("inf")}
