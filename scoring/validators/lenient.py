"""Lenient configs: Go's plain ``json.Unmarshal`` into a flat struct (scoring-semantics §2.1).

The file validators (file_exists, file_content_match, directory_structure, and the listing
they read) decode their JSON the way ``encoding/json`` does without ``DisallowUnknownFields``:

* unknown keys are ignored (``{mode: contains}`` is silently not ``match_mode``);
* a key matches a field exactly, else case-insensitively (``Must_Exist`` sets must_exist);
* ``null`` leaves a field at its default;
* a wrongly typed value is an error, but decoding goes on: the other fields still decode
  (file_exists relies on that partial result when its file is missing).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

FieldType = Literal["bool", "string", "strings", "int64", "raw"]
"""``raw`` takes any JSON value unchecked (the caller decodes it further)."""
Fields = Mapping[str, tuple[FieldType, Any]]
"""Field name → (type, default)."""

_GO_TYPES = {"bool": "bool", "string": "string", "strings": "[]string", "int64": "int64"}
_INT64 = (-(2**63), 2**63 - 1)


@dataclass(frozen=True)
class Decoded:
    """The decoded fields (defaults where absent, null or wrongly typed) and the first error."""

    values: dict[str, Any]
    error: str | None = None


def json_kind(value: Any) -> str:
    """The JSON kind of a decoded value, as Go names it in unmarshal errors."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "array"
    return "object"


def decode(raw: Any, struct: str, fields: Fields) -> Decoded:
    """Decode ``raw`` (a decoded JSON value) into the struct ``struct`` with ``fields``."""
    values = {name: default for name, (_, default) in fields.items()}
    if raw is None:
        return Decoded(values)
    if not isinstance(raw, dict):
        kind = json_kind(raw)
        return Decoded(values, f"json: cannot unmarshal {kind} into Go value of type "
                               f"scoring.{struct}")
    errors: list[str] = []
    for key, value in raw.items():
        name = _field_for(str(key), fields)
        if name is None or value is None:
            continue
        decoded, problem = _convert(value, fields[name][0])
        if problem is None:
            values[name] = decoded
        else:
            go_type = _GO_TYPES[fields[name][0]]
            if go_type == "[]string" and isinstance(value, list):
                go_type = "string"
            errors.append(f"json: cannot unmarshal {problem} into Go struct field "
                          f"{struct}.{name} of type {go_type}")
    return Decoded(values, errors[0] if errors else None)


def _field_for(key: str, fields: Fields) -> str | None:
    if key in fields:
        return key
    folded = key.casefold()
    return next((name for name in fields if name.casefold() == folded), None)


def _convert(value: Any, field_type: FieldType) -> tuple[Any, str | None]:
    """The Go value of ``value`` for ``field_type``, or the JSON kind that does not fit."""
    if field_type == "raw":
        return value, None
    if field_type == "strings":
        if not isinstance(value, list):
            return None, json_kind(value)
        bad = next((json_kind(v) for v in value if v is not None and not isinstance(v, str)),
                   None)
        return [v if isinstance(v, str) else "" for v in value], bad
    if field_type == "int64":
        fits = (isinstance(value, int) and not isinstance(value, bool)
                and _INT64[0] <= value <= _INT64[1])
        return (value, None) if fits else (None, _number_problem(value))
    wanted = bool if field_type == "bool" else str
    return (value, None) if isinstance(value, wanted) else (None, json_kind(value))


def _number_problem(value: Any) -> str:
    kind = json_kind(value)
    return f"number {value!r}" if kind == "number" else kind
