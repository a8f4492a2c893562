"""Evidence references: which strings name evidence, and what they resolve to (docs/scoring.md
§4.3).

A resolution is a value (text), *unavailable* (no evidence, with a reason) or an *error*
(a malformed reference or input chain). Validators see only the text.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from ..compat.goquote import quote
from ..compat.jsonpath import go_atoi
from ..compat.textform import go_json, loose_string, stringify
from ..compat.textnorm import trim
from ..spec.cases import Case, CaseEntry
from .evidence import Evidence
from .transcript import expectations_json, transcript_text

State = Literal["available", "unavailable", "error"]
MAX_INPUT_CHAIN = 8
_PLAIN = {"final_output", "run.final_output", "challenge_input", "transcript.full",
          "transcript.from_mismatch", "turn.expectations"}
_DOTTED_ROOTS = ("case.payload.", "case.inputs.", "case.expectations.", "artifact.")


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
        count = go_atoi(trim(reference.removeprefix("transcript.last_n:")))
        return count is not None and count > 0
    return _dotted_ok(reference)


def _dotted_ok(reference: str) -> bool:
    """Go's ``hasValidDottedPathAfterPrefix``: a root, then dotted non-blank parts."""
    if reference == "case.payload":
        return True
    root = next((r for r in _DOTTED_ROOTS if reference.startswith(r)), None)
    if root is None:
        return False
    rest = trim(reference.removeprefix(root))
    return bool(rest) and all(trim(part) for part in rest.split("."))


def is_the_runs(reference: str) -> bool:
    """Whether ``reference`` names what the run produced (its output, captured files,
    transcript), not what the pack gave it (case, challenge input, artifacts, literals)."""
    return reference in ("final_output", "run.final_output") or reference.startswith(
        ("file:", "transcript."))


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
        except (ValueError, RecursionError):
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
            return unavailable(f"case {label} {quote(key)} is unavailable")
        return _entry(entry, path, case, depth=0)

    return resolver


def _entry(entry: CaseEntry, path: list[str], case: Case, depth: int) -> Resolution:
    """``resolveEvidenceFieldWithDepth``: inline value, then ``source``, then
    ``artifact_key``, then ``path``; an ``input:`` chain deeper than 8 is an error."""
    if depth > MAX_INPUT_CHAIN:
        return error("evidence reference chain exceeds maximum depth")
    if entry.has_value:
        return _walk(entry.value, path)  # already a decoded JSON value: never re-parsed
    if entry.source:
        return _entry_source(entry.source, path, case, depth)
    if entry.artifact_key:
        return _artifact_value(entry.artifact_key, path, case)
    if trim(entry.path):
        return _walk(entry.path, path)
    return unavailable("evidence is unavailable")


def _entry_source(source: str, path: list[str], case: Case, depth: int) -> Resolution:
    if source.startswith("input:"):
        key = trim(source.removeprefix("input:"))
        if not key:
            return unavailable("referenced input is unavailable")
        target = case.input(key)
        if target is None:
            return unavailable(f"case input {quote(key)} is unavailable")
        return _entry(target, path, case, depth + 1)
    if source.startswith("artifact:"):
        key = trim(source.removeprefix("artifact:"))
        if not key:
            return unavailable("referenced artifact is unavailable")
        return _artifact_value(key, path, case)
    return error(f"unsupported evidence source {quote(source)}")


def _artifact_value(key: str, path: list[str], case: Case) -> Resolution:
    """``resolveArtifactValue``: the path string, or a field of ``{key, kind, path,
    media_type}`` when the reference goes on."""
    artifact = case.artifact(key)
    if artifact is None:
        return unavailable(f"artifact {quote(key)} is unavailable")
    if not path:
        return found(artifact.path)
    return _walk(artifact.model_dump(include={"key", "kind", "path", "media_type"}), path)


def _artifact(rest: str, evidence: Evidence) -> Resolution:
    case = _the_case(evidence)
    if isinstance(case, Resolution):
        return case
    key, *path = rest.split(".")
    return _artifact_value(key, path, case)


def _file(key: str, evidence: Evidence) -> Resolution:
    capture = evidence.captures.get(key)
    if capture is not None:
        if not capture["exists"]:
            path = quote(capture["path"])
            return unavailable(f"captured file {quote(key)} does not exist at path {path}")
        return found(capture["content"])
    listing = evidence.listings.get(key)
    if listing is not None:
        return found(listing_json(listing))
    return unavailable(f"file capture key {quote(key)} is unavailable")


def resolve_source(reference: str, evidence: Evidence) -> dict[str, Any] | None:
    """The run event a reference's evidence came from (``resolveEvidenceSource``).

    ``final_output``: the finalized-output event, else the last model call; ``file:<k>``:
    the capture or listing event. Anything else (cases, literals) has no event.
    """
    if reference in ("final_output", "run.final_output"):
        for name, kind in (("final_output", "final_output"), ("model_call", "model_call")):
            pointer = evidence.sources.get((name, ""))
            if pointer is not None:
                return source(kind, pointer, "final_output")
        return None
    if reference.startswith("file:"):
        key = reference[len("file:"):]
        for store in ("captures", "listings"):
            pointer = evidence.sources.get((store, key))
            if pointer is not None:
                return source("tool_call", pointer, reference)
    return None


def source(kind: str, pointer: tuple[int, str], field_path: str) -> dict[str, Any]:
    """A ``Source`` document: ``{kind, sequence, event_type, field_path}``."""
    return {"kind": kind, "sequence": pointer[0], "event_type": pointer[1],
            "field_path": field_path}


def listing_json(listing: dict[str, Any]) -> str:
    """A decoded directory listing as ``json.Marshal`` writes the Go struct (field order;
    absent entries are ``null``), then evalfleet's own when the listing does not show every
    entry (AgentClash's listings have no cap): ``"truncated":true``, ``"dropped":N``,
    ``"error":"…"``."""
    rows = listing["entries"]
    entries = "null" if rows is None else "[" + ",".join(_entry_json(e) for e in rows) + "]"
    key, path = go_json(listing["key"]), go_json(listing["path"])
    gaps = "".join(f",{go_json(name)}:{go_json(listing[name])}"
                   for name in ("truncated", "dropped", "error") if name in listing)
    return f'{{"key":{key},"path":{path},"entries":{entries}{gaps}}}'


def _entry_json(entry: dict[str, Any]) -> str:
    text = f'{{"path":{go_json(entry["path"])},"size":{int(entry["size"])}'
    return text + (',"is_dir":true}' if entry["is_dir"] else "}")


def _literal(rest: str, evidence: Evidence) -> Resolution:
    return found(rest)


def _transcript_full(evidence: Evidence) -> Resolution:
    if not evidence.turns:
        return unavailable("transcript evidence is unavailable")
    return found(transcript_text(evidence.turns))


def _transcript_from_mismatch(evidence: Evidence) -> Resolution:
    turns = evidence.turns
    first = next((i for i, t in enumerate(turns) if t.mismatch), None)
    if first is None:
        return unavailable("transcript mismatch evidence is unavailable")
    return found(transcript_text(turns[first:]))


def _transcript_last_n(rest: str, evidence: Evidence) -> Resolution:
    if not evidence.turns:
        return unavailable("transcript evidence is unavailable")
    count = go_atoi(trim(rest)) or 1
    return found(transcript_text(evidence.turns[max(len(evidence.turns) - count, 0):]))


def _turn_expectations(evidence: Evidence) -> Resolution:
    if not evidence.turns:
        return unavailable("turn expectations evidence is unavailable")
    return found(expectations_json(evidence.turns))


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
