"""Go's ``json.Unmarshal`` into a flat struct, as AgentClash reads a judge model's reply.

The struct's fields are ``string``, ``float64``, ``bool`` or ``[]string``. Go's rules, which
differ from reading the value into ``any``:

* the text must first be one valid JSON value (the syntax error is Go's, see
  :mod:`scoring.compat.gojsonscan`); a top-level ``null`` leaves every field at its zero
  value, any other non-object is a type error against the whole struct;
* keys are matched to fields in document order, exactly or else case-insensitively
  (:func:`scoring.compat.godecode.match_field`), so the last key for a field wins; keys
  that match no field are skipped;
* ``null`` leaves a scalar field as it is and sets a slice field to nil; a ``null`` item of
  a ``[]string`` is ``""``;
* a value of the wrong type, or a number past float64's range, is skipped and decoding
  goes on; the first such error in document order is returned once decoding ends.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Final, Literal

from .godecode import match_field
from .gojson import UnmarshalError, decode

Kind = Literal["string", "float64", "bool", "[]string"]
ZERO: Final[dict[str, Any]] = {"string": "", "float64": 0.0, "bool": False, "[]string": ()}
"""Each kind's zero value (a nil slice reads as empty; callers get a fresh list)."""


class _Number(str):
    """A number's literal text, kept until a field says what it must be."""


class _Pairs(list[tuple[str, Any]]):
    """An object's members in document order, duplicates kept."""


_DECODER: Final = json.JSONDecoder(object_pairs_hook=_Pairs, parse_int=_Number,
                                   parse_float=_Number)


@dataclass(frozen=True)
class Field:
    """One struct field: its Go name, its ``json`` tag name and its type."""

    go_name: str
    name: str
    kind: Kind


@dataclass(frozen=True)
class Struct:
    """An anonymous Go struct type with ``json`` tags."""

    fields: tuple[Field, ...]

    @property
    def type_name(self) -> str:
        """Go's ``reflect.Type.String()`` of the struct, as its type errors print it."""
        parts = [f'{f.go_name} {f.kind} "json:\\"{f.name}\\""' for f in self.fields]
        return "struct { " + "; ".join(parts) + " }"


def unmarshal_struct(text: str, struct: Struct) -> dict[str, Any]:
    """The struct's fields by ``json`` name, decoded from ``text`` as Go decodes them.

    Raises:
        UnmarshalError: a syntax error, or the first type error (Go's wording).
    """
    value = decode(text, _DECODER)
    decoded = {f.name: list(ZERO[f.kind]) if f.kind == "[]string" else ZERO[f.kind]
               for f in struct.fields}
    if value is None:
        return decoded
    if not isinstance(value, _Pairs):
        raise UnmarshalError(f"json: cannot unmarshal {_kind(value)} into Go value of type "
                             f"{struct.type_name}")
    errors = [e for e in (_member(key, item, struct, decoded) for key, item in value) if e]
    if errors:
        raise UnmarshalError(errors[0])
    return decoded


def _member(key: str, item: Any, struct: Struct, decoded: dict[str, Any]) -> str:
    """Decode one member into ``decoded``; its type error, else ``""``."""
    name = match_field(key, [f.name for f in struct.fields])
    field = next((f for f in struct.fields if f.name == name), None)
    if field is None:
        return ""
    if item is None:
        decoded[field.name] = None if field.kind == "[]string" else decoded[field.name]
        return ""
    value, problem = _converted(item, field.kind)
    if value is not None:
        decoded[field.name] = value
    if not problem:
        return ""
    found, wanted = problem
    return f"json: cannot unmarshal {found} into Go struct field .{field.name} of type {wanted}"


def _converted(item: Any, kind: Kind) -> tuple[Any, tuple[str, str] | None]:
    """``item`` as ``kind`` (None when it cannot be), and the type problem if any: what was
    found, and the Go type it could not go into."""
    if kind == "[]string":
        if not isinstance(item, list) or isinstance(item, _Pairs):
            return None, (_kind(item), "[]string")
        texts = [_string(i) for i in item]
        bad = next((i for i, text in zip(item, texts, strict=True) if text is None), None)
        return [t or "" for t in texts], None if bad is None else (_kind(bad), "string")
    if kind == "float64" and isinstance(item, _Number):
        number = float(item)
        return (None, (f"number {item}", "float64")) if abs(number) == float("inf") \
            else (number, None)
    if kind == "bool" and isinstance(item, bool):
        return item, None
    if kind == "string" and isinstance(item, str) and not isinstance(item, _Number):
        return item, None
    return None, (_kind(item), kind)


def _string(item: Any) -> str | None:
    """A ``[]string`` item: the string, ``""`` for null, None for any other type."""
    if item is None:
        return ""
    return item if isinstance(item, str) and not isinstance(item, _Number) else None


def _kind(value: Any) -> str:
    """How Go's type errors name a JSON value."""
    kinds = ((_Number, "number"), (bool, "bool"), (str, "string"), (_Pairs, "object"),
             (list, "array"))
    return next(name for kind, name in kinds if isinstance(value, kind))
