"""JSON Schema checking shared by json_schema and file_json_schema (docs/scoring.md §5.5, §5.17).

AgentClash validates with google/jsonschema-go v0.3.0 (``json_validators.go``): the schema
is decoded into jsonschema-go's ``Schema`` (:mod:`.schema_decode`; an error is ``parse
JSON schema: …``), its ``$schema`` checked, then resolved (:mod:`.schema_resolve`; ``resolve
JSON schema: …``), then the document validated. ``$schema`` absent, empty or
``https://json-schema.org/draft/2020-12/schema`` means 2020-12; the draft-07 URIs
(``http://`` or ``https://json-schema.org/draft-07/schema#``) are accepted but validated with
the same 2020-12 engine (the shared keyword subset); any other ``$schema`` is an error
"unsupported JSON schema draft". jsonschema-go checks no meta-schema: a keyword value it
can decode is used as it is (``minLength: -1`` holds for every string, an unknown ``type``
for no value, ``multipleOf: 0`` for no number).

Validation itself is the ``jsonschema`` library's 2020-12 validator with jsonschema-go's
rules where they differ: ``pattern`` and ``patternProperties`` are RE2, as in Go;
``type`` counts an integral number (``1.0`` too) as an integer; ``multipleOf`` divides and
asks for a zero fractional part (Go's ``math.Modf``). A failed validation's reason is
``json schema validation failed``; jsonschema-go's own message is evidence only
(``validation_error``), worded by the library here.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Hashable, Iterator, Mapping
from typing import Any

from jsonschema import Draft202012Validator, validators  # type: ignore[import-untyped]
from jsonschema.exceptions import (  # type: ignore[import-untyped]
    UndefinedTypeCheck,
    UnknownType,
    ValidationError,
    best_match,
)
from referencing.exceptions import Unresolvable

from ..compat.gojsonscan import JSONSyntaxError
from ..compat.gojsonscan import check as check_json
from ..compat.goquote import quote
from ..compat.jsondoc import DocumentError, parse_document
from ..compat.patterns import PatternError, compile_pattern
from .base import NESTED_TOO_DEEPLY, Outcome
from .schema_decode import DecodeError, Literal, decode_schema, parse_float, parse_int
from .schema_resolve import DRAFT_2020_12, ResolveError, resolve

DRAFT_07 = ("http://json-schema.org/draft-07/schema#", "https://json-schema.org/draft-07/schema#")


class SchemaProblem(ValueError):
    """The schema cannot be used: not JSON, not a schema, or an unsupported draft."""


class SchemaUnresolved(SchemaProblem):
    """The schema decodes but jsonschema-go's ``Resolve`` refuses it."""

    def __init__(self, message: str, draft: str) -> None:
        super().__init__(message)
        self.draft = draft


def _re2_pattern(validator: Any, pattern: str, instance: Any,
                 schema: Mapping[str, Any]) -> Iterator[ValidationError]:
    if isinstance(instance, str) and compile_pattern(pattern).search(instance) is None:
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _re2_pattern_properties(validator: Any, patterns: Mapping[str, Any], instance: Any,
                            schema: Mapping[str, Any]) -> Iterator[ValidationError]:
    if not isinstance(instance, dict):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if compile_pattern(pattern).search(key) is not None:
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _go_type(validator: Any, types: Any, instance: Any,
             schema: Mapping[str, Any]) -> Iterator[ValidationError]:
    """jsonschema-go's ``type``: an integral number is an integer, an integer a number."""
    wanted = [types] if isinstance(types, str) else list(types)
    got = _json_type(instance)
    if got not in wanted and not (got == "integer" and "number" in wanted):
        yield ValidationError(f"{instance!r} is not of type {', '.join(map(repr, wanted))}")


def _json_type(instance: Any) -> str:
    if isinstance(instance, bool):
        return "boolean"
    if isinstance(instance, int | float):
        return "integer" if math.isfinite(instance) and instance == int(instance) else "number"
    kinds = ((str, "string"), (list, "array"), (dict, "object"))
    return next((name for kind, name in kinds if isinstance(instance, kind)), "null")


def _go_multiple_of(validator: Any, divisor: float, instance: Any,
                    schema: Mapping[str, Any]) -> Iterator[ValidationError]:
    """jsonschema-go's ``multipleOf``: ``math.Modf(n / divisor)`` has no fraction (a zero
    divisor, giving ±Inf or NaN, never does)."""
    if isinstance(instance, bool) or not isinstance(instance, int | float):
        return
    try:
        quotient = float(instance) / float(divisor)
    except ZeroDivisionError:
        quotient = math.nan
    if not math.isfinite(quotient) or math.modf(quotient)[0] != 0:
        yield ValidationError(f"{instance!r} is not a multiple of {divisor!r}")


def _go_unique_items(validator: Any, unique: bool, instance: Any,
                     schema: Mapping[str, Any]) -> Iterator[ValidationError]:
    """jsonschema-go's ``uniqueItems``: items hashed by their JSON value (a boolean is no
    number). jsonschema compares every pair of items it cannot sort: quadratic, so an
    answer of 200 KB held a worker for the task's time limit (found by a red-team pass);
    and on what it sorted it took ``[[1], [true], [1]]`` for unique."""
    if not unique or not validator.is_type(instance, "array"):
        return
    seen: set[Hashable] = set()
    for item in instance:
        key = _json_key(item)
        if key in seen:
            yield ValidationError(f"{instance!r} has non-unique elements")
            return
        seen.add(key)


def _json_key(value: Any) -> Hashable:
    """A hashable key equal for equal JSON values (numbers by value: ``1`` is ``1.0``)."""
    if isinstance(value, bool) or value is None:
        return ("literal", value)
    if isinstance(value, list):
        return ("array", tuple(_json_key(item) for item in value))
    if isinstance(value, dict):
        return ("object", frozenset((name, _json_key(item)) for name, item in value.items()))
    return ("number" if isinstance(value, int | float) else "string", value)


_Engine = validators.extend(Draft202012Validator, {
    "pattern": _re2_pattern, "patternProperties": _re2_pattern_properties,
    "type": _go_type, "multipleOf": _go_multiple_of, "uniqueItems": _go_unique_items})


def parse_schema_text(text: str) -> Any:
    """Decode schema text as Go's ``json.Unmarshal`` reads it (one value, nothing after
    it, Go's syntax errors); number literals keep what jsonschema-go's decode needs.

    Raises:
        SchemaProblem: when the text is not JSON.
    """
    try:
        check_json(text)
        return json.loads(text, parse_float=parse_float, parse_int=parse_int)
    except (JSONSyntaxError, ValueError, RecursionError) as err:
        raise SchemaProblem(str(err)) from None


def schema_draft(schema: Any) -> str:
    """The draft URI a schema declares (2020-12 when absent): AgentClash's
    ``parseJSONSchema``, the decode and the draft check without ``Resolve``.

    Raises:
        SchemaProblem: when the schema does not decode or names another draft.
    """
    return _decoded(schema)[1]


def _decoded(schema: Any) -> tuple[Any, str]:
    try:
        decoded = decode_schema(schema)
    except DecodeError as err:
        raise SchemaProblem(str(err)) from None
    except RecursionError:
        raise SchemaProblem("exceeded max depth") from None
    declared = decoded.get("$schema", "") if isinstance(decoded, dict) else ""
    if declared not in ("", DRAFT_2020_12, *DRAFT_07):
        raise SchemaProblem(f"unsupported JSON schema draft {quote(declared)}")
    if declared in DRAFT_07:
        decoded = {key: value for key, value in decoded.items() if key != "$schema"}
    return decoded, declared or DRAFT_2020_12


def load_schema(schema: Any) -> tuple[Any, str]:
    """A ready validator for ``schema`` and its draft URI (cached by the schema's JSON).

    Decoding and resolving a schema costs far more than validating a small document; a
    pack evaluates the same schema on every run, so the resolved validator is kept, keyed
    by the schema's JSON text in its own key order.

    Raises:
        SchemaProblem: when the schema does not decode or names another draft.
        SchemaUnresolved: when jsonschema-go's ``Resolve`` would refuse it.
    """
    try:
        key = json.dumps(schema, allow_nan=False)
    except (TypeError, ValueError, RecursionError):  # not plain JSON: check it uncached
        return _load_schema(schema)
    if _has_literals(schema):  # the cache key's JSON would lose their text
        return _load_schema(schema)
    return _load_schema_text(key)


def _has_literals(schema: Any) -> bool:
    """Whether number literals whose text matters to the decode are in the schema."""
    if isinstance(schema, Literal):
        return True
    if isinstance(schema, dict):
        return any(map(_has_literals, schema.values()))
    return isinstance(schema, list) and any(map(_has_literals, schema))


@functools.lru_cache(maxsize=256)
def _load_schema_text(text: str) -> tuple[Any, str]:
    return _load_schema(json.loads(text))


def _load_schema(schema: Any) -> tuple[Any, str]:
    decoded, draft = _decoded(schema)
    try:
        resolve(decoded)
    except ResolveError as err:
        raise SchemaUnresolved(str(err), draft) from None
    except RecursionError:
        raise SchemaUnresolved("exceeded max depth", draft) from None
    return _Engine(decoded), draft


def as_float64(value: Any) -> Any:
    """The document as AgentClash validates it (``parseJSONDocument``): every number a
    float64, so ``9007199254740993`` is ``9007199254740992``.

    Raises:
        DocumentError: an integer beyond float64's range (Go cannot decode it).
    """
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        try:
            return float(value)
        except OverflowError:
            raise DocumentError(f"json: cannot unmarshal number {value} into Go value of "
                                "type float64") from None
    if isinstance(value, dict):
        return {key: as_float64(item) for key, item in value.items()}
    if isinstance(value, list):
        return [as_float64(item) for item in value]
    return value


def check_document(actual: str, schema: Any) -> Outcome:
    """Validate the actual text (one JSON value) against a decoded schema."""
    try:
        document = as_float64(parse_document(actual))
    except DocumentError as err:
        return Outcome.error(f"parse actual JSON document: {err}", error=str(err))
    try:
        engine, draft = load_schema(schema)
    except SchemaUnresolved as err:
        return Outcome.error(f"resolve JSON schema: {err}", schema_draft=err.draft,
                             error=str(err))
    except SchemaProblem as err:
        return Outcome.error(f"parse JSON schema: {err}", error=str(err))
    return _validate(engine, draft, document)


#: A document at most this deep that runs validation out of Python's stack shows a schema
#: that recurses by itself (``{"$ref": "#"}``): the pack's error. Deeper, the answer's
#: nesting did it (a 300-deep array under ``{"items": {"$ref": "#"}}``, which Go's
#: validator reads): a forfeit, never a run voided by a losing candidate.
SHALLOW = 64


def depth(document: Any) -> int:
    """How deep ``document`` nests (a scalar is 0), walked without recursion."""
    deepest, stack = 0, [(document, 0)]
    while stack:
        value, level = stack.pop()
        deepest = max(deepest, level)
        children = value.values() if isinstance(value, dict) else \
            value if isinstance(value, list) else ()
        stack.extend((child, level + 1) for child in children)
    return deepest


def _first_problem(problems: list[ValidationError]) -> ValidationError | None:
    """The library's most relevant problem (its ranking cannot weigh an unknown ``type``
    name, which jsonschema-go allows: then the first)."""
    try:
        return best_match(problems)
    except UndefinedTypeCheck:
        return problems[0]


def _validate(engine: Any, draft: str, document: Any) -> Outcome:
    try:
        problem = _first_problem(list(engine.iter_errors(document)))
    except RecursionError as err:
        if depth(document) > SHALLOW:  # the answer's nesting ran Python out of stack
            return Outcome.error(NESTED_TOO_DEEPLY, schema_draft=draft)
        return Outcome.error(f"resolve JSON schema: {err}", schema_draft=draft, error=str(err))
    except (Unresolvable, UnknownType, PatternError) as err:
        return Outcome.error(f"resolve JSON schema: {err}",
                             schema_draft=draft, error=str(err))
    if problem is None:
        return Outcome.passed(schema_draft=draft)
    return Outcome.failed("json schema validation failed", schema_draft=draft,
                          validation_error=problem.message, validation_target="actual_value")
