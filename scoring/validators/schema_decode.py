"""A JSON Schema decoded as google/jsonschema-go v0.3.0 decodes it, with Go 1.25's errors.

AgentClash runs ``json.Unmarshal`` into a ``jsonschema.Schema`` (``json_validators.go``,
``parseJSONSchema``). jsonschema-go's ``Schema.UnmarshalJSON`` (``schema.go``) takes a JSON
boolean as the true/false schema and otherwise decodes the object into an anonymous struct
that holds ``type``, ``const`` and the eight integer keywords itself and embeds
``*schemaWithoutMethods`` for the rest; unknown keys are kept aside (``util.go``,
``unmarshalStructWithMap``). What that means here:

* a keyword matches its field exactly, else case-insensitively (``Minimum`` sets
  ``minimum``); the later of two keys wins; ``null`` unsets a pointer, list or map field
  (a string or boolean keeps its value), but a ``null`` item of a schema list or map stays
  as a nil subschema (Resolve refuses it);
* a wrongly typed keyword is an ``encoding/json`` type error, kept while decoding goes on:
  the first one is reported unless something worse stops the decode;
* the integer keywords (``minLength`` …) and every nested subschema stop the decode at
  their first error: ``not an integer value``, ``integer is out of range``, …;
* after the struct, ``type`` must be a string or a list of strings (``invalid value for
  "type": "5"``).

Field paths are Go 1.25's (AgentClash ships Go 1.25): ``encoding/json``'s
``addErrorContext`` names the embedded struct (``.schemaWithoutMethods.minimum``) and keeps
the path of an error coming out of a nested ``UnmarshalJSON``
(``.schemaWithoutMethods.properties.schemaWithoutMethods.minimum``). Go 1.19 printed only
the outermost field (``.minimum``, ``.properties``).

The decoded form is a plain dict with each keyword under its JSON name, unknown keys as
given, nested subschemas decoded, and nil subschemas as ``None``.
"""

from __future__ import annotations

import json
from typing import Any

from ..compat.godecode import match_field
from ..compat.goquote import quote
from ..compat.lenient import json_kind

DECODE_TARGET = (
    'struct { Type json.RawMessage "json:\\"type,omitempty\\""; Const json.RawMessage '
    '"json:\\"const,omitempty\\""; ' + "; ".join(
        f'{name} *jsonschema.integer "json:\\"{tag},omitempty\\""' for name, tag in (
            ("MinLength", "minLength"), ("MaxLength", "maxLength"), ("MinItems", "minItems"),
            ("MaxItems", "maxItems"), ("MinProperties", "minProperties"),
            ("MaxProperties", "maxProperties"), ("MinContains", "minContains"),
            ("MaxContains", "maxContains"))) + "; *jsonschema.schemaWithoutMethods }")
"""The anonymous struct ``Schema.UnmarshalJSON`` decodes an object into, as Go prints it."""
EMBEDDED = "schemaWithoutMethods"

_KINDS: dict[str, tuple[str, ...]] = {
    "string": ("$id", "$schema", "$ref", "$comment", "$anchor", "$dynamicAnchor",
               "$dynamicRef", "title", "description", "pattern", "contentEncoding",
               "contentMediaType", "format"),
    "bool": ("deprecated", "readOnly", "writeOnly", "uniqueItems"),
    "raw": ("type", "const", "default"),
    "float64": ("multipleOf", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"),
    "integer": ("minLength", "maxLength", "minItems", "maxItems", "minProperties",
                "maxProperties", "minContains", "maxContains"),
    "anys": ("enum", "examples"),
    "strings": ("required",),
    "string_lists": ("dependentRequired",),
    "bools": ("$vocabulary",),
    "schema": ("items", "additionalItems", "contains", "unevaluatedItems",
               "additionalProperties", "propertyNames", "unevaluatedProperties", "not", "if",
               "then", "else", "contentSchema"),
    "schemas": ("prefixItems", "allOf", "anyOf", "oneOf"),
    "schema_map": ("$defs", "definitions", "properties", "patternProperties",
                   "dependentSchemas"),
}
KIND_OF = {name: kind for kind, names in _KINDS.items() for name in names}
"""Every keyword jsonschema-go's ``Schema`` has a field for → how it decodes."""
_DIRECT = frozenset({"type", "const", *_KINDS["integer"]})
_GO_TYPES = {"string": "string", "bool": "bool", "float64": "float64",
             "anys": "[]interface {}", "strings": "[]string",
             "string_lists": "map[string][]string", "bools": "map[string]bool",
             "schemas": "[]*jsonschema.Schema", "schema_map": "map[string]*jsonschema.Schema"}
_INT32 = (-(1 << 31), (1 << 31) - 1)
_INT64 = (-(1 << 63), (1 << 63) - 1)


class Literal(float):
    """A JSON number literal kept with its text, where Go's decode depends on the text."""

    text: str

    def __new__(cls, text: str) -> Literal:
        number = super().__new__(cls, text)
        number.text = text
        return number


class OutOfRange(Literal):
    """A literal beyond float64's range: Go cannot decode it as a float64 (Python's
    ``json`` would make it infinite)."""


class Exponent(Literal):
    """A literal with an exponent and no ``.`` (``1e3``): jsonschema-go's integer keywords
    read it as an int, which fails."""


def parse_float(text: str) -> float:
    """``json.loads``'s ``parse_float`` hook, keeping what Go's decode needs of the text."""
    number = float(text)
    if number in (float("inf"), float("-inf")):
        return OutOfRange(text)
    return Exponent(text) if "." not in text else number


def parse_int(text: str) -> int | float:
    """``json.loads``'s ``parse_int`` hook: more than 309 digits is beyond float64."""
    return OutOfRange(text) if len(text.lstrip("-")) > 309 else int(text)


class DecodeError(ValueError):
    """What ``json.Unmarshal`` into ``jsonschema.Schema`` returns (``str`` is Go's text)."""

    def __init__(self, message: str, *, value: str = "", go_type: str = "",
                 field: str = "") -> None:
        super().__init__(message)
        self.value, self.go_type, self.field = value, go_type, field

    @classmethod
    def of_type(cls, value: str, go_type: str, field: str = "") -> DecodeError:
        """An ``*json.UnmarshalTypeError``: ``value`` does not fit ``go_type``."""
        where = f"Go struct field .{field}" if field else "Go value"
        return cls(f"json: cannot unmarshal {value} into {where} of type {go_type}",
                   value=value, go_type=go_type, field=field)

    def within(self, field: str) -> DecodeError:
        """The error as the enclosing decode reports it (Go 1.25's ``addErrorContext``)."""
        if not self.go_type:
            return self
        return DecodeError.of_type(self.value, self.go_type,
                                   f"{field}.{self.field}" if self.field else field)


def decode_schema(value: Any) -> Any:
    """The schema as jsonschema-go holds it after ``json.Unmarshal`` (see the module doc).

    Raises:
        DecodeError: with the text Go 1.25 gives.
    """
    if isinstance(value, bool):
        return value
    if value is None:  # only at the top: Unmarshal of null into a Schema is the false schema
        return False
    if not isinstance(value, dict):
        raise DecodeError.of_type(_kind(value), DECODE_TARGET)
    decoded = _struct(value)
    _check_numbers(value)
    if "type" in decoded:
        _check_type(decoded["type"])
    return decoded


def _struct(value: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    kept: DecodeError | None = None
    for key, item in value.items():
        name = match_field(str(key), KIND_OF)
        if name is None:
            out[key] = item
            continue
        field = name if name in _DIRECT else f"{EMBEDDED}.{name}"
        try:
            decoded, problem = _field(KIND_OF[name], item)
        except DecodeError as err:
            raise err.within(field) from None
        if problem is not None:
            kept = kept or DecodeError.of_type(*problem, field)
        elif decoded is not _UNSET:
            out[name] = decoded
        elif item is None and KIND_OF[name] not in ("string", "bool"):
            out.pop(name, None)  # null sets a pointer, slice or map back to nil
    if kept is not None:
        raise kept
    return out


_UNSET: Any = object()


def _field(kind: str, item: Any) -> tuple[Any, tuple[str, str] | None]:
    """(decoded value, kept type problem); raises for the errors that stop the decode."""
    if item is None:
        return (None if kind == "raw" else _UNSET), None
    if kind == "raw":
        return item, None
    if kind == "integer":
        return _integer(item), None
    if kind == "schema":
        return decode_schema(item), None
    if kind in ("schemas", "schema_map"):
        return _subschemas(kind, item)
    problem = _mismatch(kind, item)
    return (_UNSET, problem) if problem else (_zeroed(kind, item), None)


def _zeroed(kind: str, item: Any) -> Any:
    """A container with its nulls as Go decodes them: ``""`` in a ``[]string``, a nil (empty)
    slice in a ``map[string][]string``, ``false`` in a ``map[string]bool`` (the validator
    iterates them; a null raised ``TypeError`` there)."""
    if kind == "strings":
        return ["" if s is None else s for s in item]
    if kind == "string_lists":
        return {k: [] if v is None else ["" if s is None else s for s in v]
                for k, v in item.items()}
    if kind == "bools":
        return {k: bool(v) for k, v in item.items()}
    return item


def _subschemas(kind: str, item: Any) -> tuple[Any, tuple[str, str] | None]:
    if kind == "schemas" and isinstance(item, list):
        return [None if s is None else decode_schema(s) for s in item], None
    if kind == "schema_map" and isinstance(item, dict):
        return {k: None if s is None else decode_schema(s) for k, s in item.items()}, None
    return _UNSET, (_kind(item), _GO_TYPES[kind])


def _mismatch(kind: str, item: Any) -> tuple[str, str] | None:
    """The (JSON value, Go type) of the first part of ``item`` that ``kind`` cannot hold."""
    if kind == "anys":
        if not isinstance(item, list):
            return _kind(item), _GO_TYPES[kind]
        return _first_overflow(item)
    if kind in ("strings", "string_lists", "bools"):
        return _container(kind, item)
    if kind == "float64":
        if isinstance(item, OutOfRange):
            return f"number {item.text}", "float64"
        return None if _is_number(item) else (_kind(item), "float64")
    fits = isinstance(item, str) if kind == "string" else isinstance(item, bool)
    return None if fits else (_kind(item), _GO_TYPES[kind])


def _container(kind: str, item: Any) -> tuple[str, str] | None:
    if kind == "strings":
        if not isinstance(item, list):
            return _kind(item), "[]string"
        return next(((_kind(s), "string") for s in item
                     if s is not None and not isinstance(s, str)), None)
    if not isinstance(item, dict):
        return _kind(item), _GO_TYPES[kind]
    for value in item.values():
        problem = _mismatch("strings", value) if kind == "string_lists" else (
            None if value is None or isinstance(value, bool) else (_kind(value), "bool"))
        if value is not None and problem is not None:
            return problem
    return None


def _integer(item: Any) -> int:
    """jsonschema-go's ``integer.UnmarshalJSON``: an int32, written with or without ``.0``."""
    if "." in _raw(item):
        if not _is_number(item) or isinstance(item, OutOfRange):
            raise DecodeError("not a number")
        if int(item) != item:
            raise DecodeError("not an integer value")
        number = int(item)
    elif isinstance(item, int) and not isinstance(item, bool) and _INT64[0] <= item <= _INT64[1]:
        number = item
    else:
        raise DecodeError("cannot be unmarshaled into an int")
    if not _INT32[0] <= number <= _INT32[1]:
        raise DecodeError("integer is out of range")
    return number


def _check_numbers(value: dict[str, Any]) -> None:
    """Go decodes the whole object once more into ``map[string]any``: a number beyond
    float64 anywhere in it (``const``, ``default``, unknown keys) fails there."""
    problem = _first_overflow(value)
    if problem is not None:
        raise DecodeError.of_type(*problem)


def _first_overflow(value: Any) -> tuple[str, str] | None:
    if isinstance(value, OutOfRange):
        return f"number {value.text}", "float64"
    items = value.values() if isinstance(value, dict) else value if isinstance(
        value, list) else ()
    return next((p for p in map(_first_overflow, items) if p is not None), None)


def _check_type(raw: Any) -> None:
    """``type`` is a string or a list of strings (``schema.go``, ``UnmarshalJSON``)."""
    if isinstance(raw, str):
        return
    if isinstance(raw, list):
        bad = next((s for s in raw if s is not None and not isinstance(s, str)), None)
        if bad is not None:
            raise DecodeError.of_type(_kind(bad), "string")
        return
    raise DecodeError(f'invalid value for "type": {quote(_raw(raw))}')


def _raw(item: Any) -> str:
    """The JSON text of a decoded value (written compactly; a literal keeps its text)."""
    if isinstance(item, Literal):
        return item.text
    return json.dumps(item, ensure_ascii=False, separators=(",", ":"))


def _is_number(item: Any) -> bool:
    return isinstance(item, int | float) and not isinstance(item, bool)


def _kind(item: Any) -> str:
    return json_kind(item)
