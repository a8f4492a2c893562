"""The multi-turn transcript: turns read from every event that names a ``turn_index``.

AgentClash (``transcript_evidence.go``, ``buildTranscriptFromEvents``) reads the turns from
*any* event whose payload has a numeric ``turn_index`` (truncated to an integer), taking
``phase_id`` from any of them; ``turn.user.message`` sets the user text and actor,
``turn.assistant.message`` the assistant text, ``turn.completed`` the ``mismatch`` flag (and
the actor when none is known). Text fields are loose strings, set only when present. The
events are first re-sorted: two sequenced events by sequence number, otherwise by time.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from ..compat.textform import go_json, loose_string
from ..compat.textnorm import trim
from .events import Event


@dataclass
class Turn:
    """One turn of a multi-turn transcript."""

    index: int
    user: str = ""
    assistant: str = ""
    actor: str = ""
    phase_id: str = ""
    mismatch: bool = False


def build_turns(events: list[Event]) -> list[Turn]:
    """The turns of ordered ``events``, by turn index."""
    turns: dict[int, Turn] = {}
    for event in sorted(events, key=functools.cmp_to_key(_before)):
        index = _turn_index(event.payload.get("turn_index"))
        if index is not None:
            _apply(turns.setdefault(index, Turn(index=index)), event)
    return [turns[i] for i in sorted(turns)]


def _before(left: Event, right: Event) -> int:
    """Go's comparator: by sequence when both have one, else by time (stable otherwise)."""
    if (left.sequence_number or 0) > 0 and (right.sequence_number or 0) > 0:
        return (left.sequence_number or 0) - (right.sequence_number or 0)
    if left.occurred_at is None or right.occurred_at is None:
        return 0
    return -1 if left.occurred_at < right.occurred_at else \
        1 if left.occurred_at > right.occurred_at else 0


def _turn_index(value: Any) -> int | None:
    """Go's ``intValue``: a JSON number truncated toward zero, else None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        return int(value)
    except (OverflowError, ValueError):  # ±Inf/NaN cannot come from JSON
        return None


def _text(payload: dict[str, Any], key: str) -> str | None:
    return loose_string(payload[key]) if key in payload else None


def _apply(turn: Turn, event: Event) -> None:
    payload = event.payload
    phase = _text(payload, "phase_id")
    if phase is not None:
        turn.phase_id = phase
    if event.type == "turn.user.message":
        turn.user = _or(_text(payload, "content"), turn.user)
        turn.actor = _or(_text(payload, "actor"), turn.actor)
    elif event.type == "turn.assistant.message":
        turn.assistant = _or(_text(payload, "content"), turn.assistant)
    elif event.type == "turn.completed":
        if isinstance(payload.get("mismatch"), bool):
            turn.mismatch = payload["mismatch"]
        actor = _text(payload, "actor")
        if actor is not None and not turn.actor:
            turn.actor = actor


def _or(value: str | None, current: str) -> str:
    return current if value is None else value


def transcript_text(turns: list[Turn]) -> str:
    """``user[i]: …`` / ``assistant[i]: …`` lines; blank messages are skipped."""
    lines: list[str] = []
    for turn in turns:
        if trim(turn.user):
            lines.append(f"user[{turn.index}]: {turn.user}")
        if trim(turn.assistant):
            lines.append(f"assistant[{turn.index}]: {turn.assistant}")
    return "\n".join(lines)


def expectations_json(turns: list[Turn]) -> str:
    """``turn.expectations``: ``[{turn_index, phase_id?, mismatch}]`` as Go writes it."""
    rows = []
    for turn in turns:
        phase = f',"phase_id":{go_json(turn.phase_id)}' if turn.phase_id else ""
        rows.append(f'{{"turn_index":{turn.index}{phase},'
                    f'"mismatch":{"true" if turn.mismatch else "false"}}}')
    return "[" + ",".join(rows) + "]"
