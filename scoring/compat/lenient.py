"""Go's ``encoding/json`` into a flat struct: validator configs and grader events.

AgentClash decodes a validator's config (and the worker's grader events) into small Go
structs. Two flavours, both reproduced here with Go's exact error text:

* plain ``json.Unmarshal`` (the file validators' configs, grader events): unknown keys are
  ignored (``{mode: contains}`` is silently not ``match_mode``);
* ``DisallowUnknownFields`` (the other configs): an unknown key is ``json: unknown field
  "x"``.

In both, a key matches a field exactly, else case-insensitively (``Must_Exist`` sets
must_exist); ``null`` leaves a field at its default (a ``json.RawMessage`` keeps it as
:data:`NULL`); a wrongly typed value is ``json: cannot unmarshal string into Go struct
field fileExistsConfig.must_exist of type bool``, but decoding goes on and the *first*
problem, in key order, is the one reported (file_exists relies on the partial result).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .godecode import match_field

Fields = Mapping[str, tuple[str, Any]]
"""Field name → (type, default). Types: ``bool``, ``string``, ``strings`` (``[]string``),
``int``, ``int64``, ``float64``, ``raw`` (any value, unchecked), ``rawmessage`` (a Go
``json.RawMessage``). ``string:pkg.Name`` is a named string type (its name in messages)."""

_GO_NAMES = {"bool": "bool", "string": "string", "strings": "[]string", "int": "int",
             "int64": "int64", "float64": "float64"}
_INT64 = (-(2**63), 2**63 - 1)


class _JSONNull:
    """An explicit JSON ``null`` kept by a ``json.RawMessage`` field."""

    def __repr__(self) -> str:
        return "NULL"


NULL: Any = _JSONNull()


@dataclass(frozen=True)
class Decoded:
    """The decoded fields (defaults where absent, null or wrongly typed), which keys were
    given, and the first error."""

    values: dict[str, Any]
    error: str | None = None
    present: frozenset[str] = field(default_factory=frozenset)


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


def decode(raw: Any, struct: str, fields: Fields, *, strict: bool = False) -> Decoded:
    """Decode ``raw`` (a decoded JSON value) into the Go struct ``scoring.<struct>``."""
    values = {name: default for name, (_, default) in fields.items()}
    if raw is None:
        return Decoded(values)
    if not isinstance(raw, dict):
        return Decoded(values, f"json: cannot unmarshal {json_kind(raw)} into Go value of type "
                               f"scoring.{struct}")
    errors: list[str] = []
    present: set[str] = set()
    for key, value in raw.items():
        name = match_field(str(key), fields)
        if name is None:
            if strict:
                errors.append(f'json: unknown field "{key}"')
            continue
        present.add(name)
        problem = _assign(values, name, fields[name][0], value)
        if problem is not None:
            errors.append(f"json: cannot unmarshal {problem[0]} into Go struct field "
                          f"{struct}.{name} of type {problem[1]}")
    return Decoded(values, errors[0] if errors else None, frozenset(present))


def _assign(values: dict[str, Any], name: str, field_type: str,
            value: Any) -> tuple[str, str] | None:
    """Set ``values[name]`` from ``value``; on a type mismatch, (JSON kind, Go type)."""
    if value is None:
        if field_type == "rawmessage":
            values[name] = NULL
        return None
    decoded, problem = _convert(value, field_type)
    if problem is None:
        values[name] = decoded
        return None
    kind, _, named = field_type.partition(":")
    go_type = named or _GO_NAMES[kind]
    if kind == "strings" and isinstance(value, list):
        go_type = "string"
    return problem, go_type


def _convert(value: Any, field_type: str) -> tuple[Any, str | None]:
    """The Go value of ``value`` for ``field_type``, or the JSON kind that does not fit."""
    kind = field_type.partition(":")[0]
    if kind in ("raw", "rawmessage"):
        return value, None
    if kind == "strings":
        if not isinstance(value, list):
            return None, json_kind(value)
        bad = next((json_kind(v) for v in value if v is not None and not isinstance(v, str)),
                   None)
        return [v if isinstance(v, str) else "" for v in value], bad
    if kind in ("int", "int64"):
        fits = (isinstance(value, int) and not isinstance(value, bool)
                and _INT64[0] <= value <= _INT64[1])
        return (value, None) if fits else (None, _number_problem(value))
    if kind == "float64":
        number = isinstance(value, int | float) and not isinstance(value, bool)
        return (float(value), None) if number else (None, json_kind(value))
    wanted = bool if kind == "bool" else str
    return (value, None) if isinstance(value, wanted) else (None, json_kind(value))


def _number_problem(value: Any) -> str:
    kind = json_kind(value)
    return f"number {value!r}" if kind == "number" else kind
