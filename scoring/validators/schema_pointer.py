"""jsonschema-go v0.3.0's JSON Pointers into a schema (``json_pointer.go``,
``dereferenceJSONPointer``), with its error texts.

A pointer walks the Go ``Schema`` struct, not the JSON text: a segment names a keyword's
field (``/properties``), an index into a list of subschemas (``/allOf/0``, no leading
zeros, no ``-``) or a key of a map of them (``/$defs/a``), and the end must be a subschema.
``/properties`` alone is ``does not refer to a schema, but to a
map[string]*jsonschema.Schema``; ``/minimum/x`` is ``navigated to non-Schema float64``;
an absent subschema on the way is ``navigated to nil reference``.
"""

from __future__ import annotations

from typing import Any

from ..compat.goquote import quote
from .schema_decode import KIND_OF

SCHEMA = "*jsonschema.Schema"
_GO_TYPES = {"string": "string", "bool": "bool", "float64": "*float64", "integer": "*int",
             "anys": "[]interface {}", "strings": "[]string",
             "string_lists": "map[string][]string", "bools": "map[string]bool",
             "schema": SCHEMA, "schemas": "[]*jsonschema.Schema",
             "schema_map": "map[string]*jsonschema.Schema"}
_ZERO = {"string": "", "bool": False}


class PointerError(ValueError):
    """The pointer does not lead to a subschema (``str`` is jsonschema-go's text)."""


def dereference(schema: Any, pointer: str) -> Any:
    """The subschema ``pointer`` (already unescaped from the URI fragment) names.

    Raises:
        PointerError: with jsonschema-go's text (the caller adds ``JSON Pointer "…": ``).
    """
    if not pointer:
        return schema
    if not pointer.startswith("/"):
        raise PointerError(f"JSON Pointer {quote(pointer)} does not begin with '/'")
    go_type, value = SCHEMA, schema
    for raw in pointer[1:].split("/"):
        segment = raw.replace("~1", "/").replace("~0", "~") if "~" in pointer else raw
        go_type, value = _step(go_type, value, segment)
    if go_type != SCHEMA:
        raise PointerError(f"does not refer to a schema, but to a {go_type}")
    return value


def _step(go_type: str, value: Any, segment: str) -> tuple[str, Any]:
    if go_type.startswith("*"):
        if value is None:
            raise PointerError("navigated to nil reference")
        if go_type != SCHEMA:
            raise PointerError(f"navigated to non-Schema {go_type[1:]}")
        return _field(_as_object(value), segment)
    if go_type.startswith("[]"):
        return go_type[2:], _index(value or [], segment)
    if go_type.startswith("map["):
        if not isinstance(value, dict) or segment not in value:
            raise PointerError(f"no key {quote(segment)} in map")
        return go_type[go_type.index("]") + 1:], value[segment]
    shown = value if isinstance(value, str) else f"%!s({go_type}={_go_value(value)})"
    raise PointerError(f"value {shown} ({go_type}) is not a schema, slice or map")


def _as_object(schema: Any) -> dict[str, Any]:
    """A boolean schema as jsonschema-go holds it: true is ``{}``, false ``{not: {}}``."""
    if isinstance(schema, bool):
        return {} if schema else {"not": {}}
    return schema if isinstance(schema, dict) else {}


def _field(schema: dict[str, Any], name: str) -> tuple[str, Any]:
    if name == "type":
        kept = schema.get("type")
        return ("string", kept) if isinstance(kept, str) and kept else ("[]string", kept)
    kind = KIND_OF.get(name)
    if kind is None:
        raise PointerError(f"no schema field {quote(name)}")
    if kind == "raw":
        return ("*interface {}" if name == "const" else "json.RawMessage"), schema.get(name)
    return _GO_TYPES[kind], schema.get(name, _ZERO.get(kind))


def _index(items: Any, segment: str) -> Any:
    if segment == "-":
        raise PointerError("the JSON Pointer array segment '-' is not supported")
    if len(segment) > 1 and segment[0] == "0":
        raise PointerError(f"segment {quote(segment)} has leading zeroes")
    try:
        index = int(segment, 10) if segment.lstrip("-").isdigit() else int("x")
    except ValueError:
        raise PointerError(f"invalid int: {quote(segment)}") from None
    if not 0 <= index < len(items):
        raise PointerError(f"index {index} is out of bounds for array of length {len(items)}")
    return items[index]


def _go_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
