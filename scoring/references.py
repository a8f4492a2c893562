"""Evidence references: which strings name evidence, and what they resolve to (§4.3).

A resolution is a value (text), *unavailable* (no evidence, with a reason) or an *error*
(a malformed reference or input chain). Validators see only the text.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from .cases import Case, CaseEntry
from .evidence import Evidence, Turn
from .textform import go_json, loose_string, stringify

State = Literal["available", "unavailable", "error"]
MAX_INPUT_CHAIN = 8
_PLAIN = {"final_output", "run.final_output", "challenge_input", "transcript.full",
          "transcript.from_mismatch", "turn.expectations"}
_DOTTED_ROOTS = ("case.payload", "case.inputs.", "case.expectations.", "artifact.")


@dataclass(frozen=True)
class Resolution:
    """What a reference resolved to."""

    state: State
    value: str | None = None
    reason: str = ""

    @property
    def available(self) -> bool:
        return self.state == "available"


def found(value: str) -> Resolution:
    return Resolution("available", value)


def unavailable(reason: str) -> Resolution:
    return Resolution("unavailable", reason=reason)


def error(reason: str) -> Resolution:
    return Resolution("error", reason=reason)


def is_supported(reference: str, *, allow_tool_calls: bool = False) -> bool:
    """Whether ``reference`` is syntactically a supported evidence reference."""
    if reference in _PLAIN or (allow_tool_calls and reference == "tool_calls"):
        return True
    if reference.startswith("literal:"):
        return True
    if reference.startswith("file:"):
        return bool(reference[5:].strip())
    if reference.startswith("transcript.last_n:"):
        count = reference.removeprefix("transcript.last_n:")
        return count.isascii() and count.isdigit() and int(count) > 0
    return _dotted_ok(reference)


def _dotted_ok(reference: str) -> bool:
    if reference == "case.payload":
        return True
    if not reference.startswith(_DOTTED_ROOTS):
        return False
    segments = reference.split(".")
    minimum = 2 if reference.startswith("artifact.") else 3
    return len(segments) >= minimum and all(s.strip() for s in segments)


def resolve(reference: str, evidence: Evidence) -> Resolution:
    """Resolve ``reference`` against the run's evidence and case."""
    if not is_supported(reference):
        return error(f"unsupported evidence reference {reference!r}")
    for prefix, resolver in _PREFIXED:
        if reference.startswith(prefix):
            return resolver(reference.removeprefix(prefix), evidence)
    return _EXACT[reference](evidence)


def _final_output(evidence: Evidence) -> Resolution:
    if evidence.final_output is None:
        return unavailable("final output evidence is unavailable")
    return found(evidence.final_output)


def _challenge_input(evidence: Evidence) -> Resolution:
    if evidence.case is None:
        return unavailable("challenge input evidence is unavailable")
    return found(stringify_raw(evidence.case.payload))


def stringify_raw(payload: Any) -> str:
    """A payload as ``challenge_input`` text: its loose string, else its raw trimmed text.

    A text payload is the raw JSON (as ``case.payload`` reads it): decoded for the loose
    string, kept verbatim otherwise; a decoded payload is re-encoded as Go's JSON.
    """
    loose = loose_string(_decoded(payload))
    if loose is not None:
        return loose
    return payload.strip() if isinstance(payload, str) else go_json(payload).strip()


def _the_case(evidence: Evidence) -> Case | Resolution:
    if not evidence.cases:
        return unavailable("case evidence is unavailable")
    if len(evidence.cases) > 1:
        return unavailable("case evidence is ambiguous across multiple cases")
    return evidence.cases[0]


def _case_payload(rest: str, evidence: Evidence) -> Resolution:
    case = _the_case(evidence)
    if isinstance(case, Resolution):
        return case
    path = rest.split(".")[1:] if rest else []
    return _walk(_decoded(case.payload), path)


def _decoded(payload: Any) -> Any:
    if isinstance(payload, str):
        try:
            return json.loads(payload)
        except ValueError:
            return payload
    return payload


def _walk(value: Any, path: list[str]) -> Resolution:
    for segment in path:
        if isinstance(value, dict) and segment in value:
            value = value[segment]
        elif isinstance(value, list) and _index(segment) < len(value):
            value = value[int(segment)]
        else:
            return unavailable("evidence path is unavailable")
    return found(stringify(value))


def _index(segment: str) -> int:
    """An array index segment (ASCII digits), or a huge number when it is none."""
    return int(segment) if segment.isascii() and segment.isdigit() else 1 << 62


def _case_entries(kind: Literal["inputs", "expectations"]) -> Any:
    def resolver(rest: str, evidence: Evidence) -> Resolution:
        case = _the_case(evidence)
        if isinstance(case, Resolution):
            return case
        key, *path = rest.split(".")
        entry = case.input(key) if kind == "inputs" else case.expectation(key)
        if entry is None:
            label = "input" if kind == "inputs" else "expectation"
            return unavailable(f'case {label} "{key}" is unavailable')
        return _entry(entry, path, case, depth=0)

    return resolver


def _entry(entry: CaseEntry, path: list[str], case: Case, depth: int) -> Resolution:
    if entry.has_value:
        return _walk(entry.value, path)  # already a decoded JSON value: never re-parsed
    if entry.source.startswith("input:"):
        return _follow_input(entry.source.removeprefix("input:"), path, case, depth)
    if entry.source.startswith("artifact:"):
        return _artifact_path(entry.source.removeprefix("artifact:"), case)
    if entry.artifact_key:
        return _artifact_path(entry.artifact_key, case)
    if entry.path:
        return found(entry.path)
    return unavailable("evidence is unavailable")


def _follow_input(key: str, path: list[str], case: Case, depth: int) -> Resolution:
    if depth + 1 > MAX_INPUT_CHAIN:
        return error(f"case input chain exceeds {MAX_INPUT_CHAIN} hops")
    target = case.input(key)
    if target is None:
        return unavailable(f'case input "{key}" is unavailable')
    return _entry(target, path, case, depth + 1)


def _artifact_path(key: str, case: Case) -> Resolution:
    artifact = case.artifact(key)
    if artifact is None:
        return unavailable(f'artifact "{key}" is unavailable')
    return found(artifact.path)


def _artifact(rest: str, evidence: Evidence) -> Resolution:
    case = _the_case(evidence)
    if isinstance(case, Resolution):
        return case
    key, *path = rest.split(".")
    artifact = case.artifact(key)
    if artifact is None:
        return unavailable(f'artifact "{key}" is unavailable')
    if not path:
        return found(artifact.path)
    return _walk(artifact.model_dump(include={"key", "kind", "path", "media_type"}), path)


def _file(key: str, evidence: Evidence) -> Resolution:
    key = key.strip()
    capture = evidence.captures.get(key)
    if capture is not None:
        if capture.get("exists") is not True:
            path = capture.get("path", "")
            return unavailable(f'captured file "{key}" does not exist at path {path}')
        content = capture.get("content")
        return found(content if isinstance(content, str) else "")
    listing = evidence.listings.get(key)
    if listing is not None:
        return found(listing_json(listing))
    return unavailable(f'file capture key "{key}" is unavailable')


def listing_json(listing: dict[str, Any]) -> str:
    """A directory listing as AgentClash serializes it (struct field order)."""
    entries = ",".join(_entry_json(e) for e in listing.get("entries") or [] if isinstance(e, dict))
    key, path = go_json(str(listing.get("key", ""))), go_json(str(listing.get("path", "")))
    return f'{{"key":{key},"path":{path},"entries":[{entries}]}}'


def _entry_json(entry: dict[str, Any]) -> str:
    text = f'{{"path":{go_json(str(entry.get("path", "")))},"size":{go_json(entry.get("size", 0))}'
    return text + (',"is_dir":true}' if entry.get("is_dir") is True else "}")


def _literal(rest: str, evidence: Evidence) -> Resolution:
    return found(rest)


def _turns(evidence: Evidence) -> list[Turn]:
    return [evidence.turns[i] for i in sorted(evidence.turns)]


def _transcript_text(turns: list[Turn]) -> str:
    lines: list[str] = []
    for turn in turns:
        if turn.user:
            lines.append(f"user[{turn.index}]: {turn.user}")
        if turn.assistant:
            lines.append(f"assistant[{turn.index}]: {turn.assistant}")
    return "\n".join(lines)


def _transcript_full(evidence: Evidence) -> Resolution:
    if not evidence.turns:
        return unavailable("transcript evidence is unavailable")
    return found(_transcript_text(_turns(evidence)))


def _transcript_from_mismatch(evidence: Evidence) -> Resolution:
    turns = _turns(evidence)
    first = next((i for i, t in enumerate(turns) if t.mismatch), None)
    if first is None:
        return unavailable("transcript has no mismatched turn")
    return found(_transcript_text(turns[first:]))


def _transcript_last_n(rest: str, evidence: Evidence) -> Resolution:
    if not evidence.turns:
        return unavailable("transcript evidence is unavailable")
    return found(_transcript_text(_turns(evidence)[-int(rest):]))


def _turn_expectations(evidence: Evidence) -> Resolution:
    if not evidence.turns:
        return unavailable("transcript evidence is unavailable")
    return found("[" + ",".join(_turn_json(t) for t in _turns(evidence)) + "]")


def _turn_json(turn: Turn) -> str:
    phase = f',"phase_id":{go_json(turn.phase_id)}' if turn.phase_id else ""
    mismatch = "true" if turn.mismatch else "false"
    return f'{{"turn_index":{turn.index}{phase},"mismatch":{mismatch}}}'


_EXACT = {
    "final_output": _final_output,
    "run.final_output": _final_output,
    "challenge_input": _challenge_input,
    "transcript.full": _transcript_full,
    "transcript.from_mismatch": _transcript_from_mismatch,
    "turn.expectations": _turn_expectations,
}
_PREFIXED = (
    ("literal:", _literal),
    ("file:", _file),
    ("transcript.last_n:", _transcript_last_n),
    ("case.payload", _case_payload),
    ("case.inputs.", _case_entries("inputs")),
    ("case.expectations.", _case_entries("expectations")),
    ("artifact.", _artifact),
)
