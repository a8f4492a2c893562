"""JSON Schema checking shared by json_schema and file_json_schema (docs/scoring.md §5.5, §5.17).

AgentClash validates with a 2020-12 engine: ``$schema`` absent, empty or
``https://json-schema.org/draft/2020-12/schema`` means 2020-12; the draft-07 URIs
(``http://`` or ``https://json-schema.org/draft-07/schema#``) are accepted but validated with
the same 2020-12 engine (the shared keyword subset); any other ``$schema`` is an error
"unsupported JSON schema draft". Integral numbers satisfy ``type: integer`` (``1.0`` too).
``pattern`` and ``patternProperties`` are RE2, as in Go.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator, Mapping
from typing import Any

from jsonschema import Draft202012Validator, validators  # type: ignore[import-untyped]
from jsonschema.exceptions import (  # type: ignore[import-untyped]
    SchemaError,
    ValidationError,
    best_match,
)
from referencing.exceptions import Unresolvable

from ..compat.jsondoc import DocumentError, parse_document
from ..compat.lenient import json_kind
from ..compat.patterns import PatternError, compile_pattern
from .base import Outcome

DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"
DRAFT_07 = ("http://json-schema.org/draft-07/schema#", "https://json-schema.org/draft-07/schema#")


class SchemaProblem(ValueError):
    """The schema cannot be used: not JSON, not a schema, or an unsupported draft."""


_DECODE_TARGET = (
    'struct { Type json.RawMessage "json:\\"type,omitempty\\""; Const json.RawMessage '
    '"json:\\"const,omitempty\\""; ' + "; ".join(
        f'{name} *jsonschema.integer "json:\\"{tag},omitempty\\""' for name, tag in (
            ("MinLength", "minLength"), ("MaxLength", "maxLength"), ("MinItems", "minItems"),
            ("MaxItems", "maxItems"), ("MinProperties", "minProperties"),
            ("MaxProperties", "maxProperties"), ("MinContains", "minContains"),
            ("MaxContains", "maxContains"))) + "; *jsonschema.schemaWithoutMethods }")
"""The Go type jsonschema-go v0.3.0's ``Schema.UnmarshalJSON`` decodes an object into (its
anonymous struct, as ``reflect`` prints it): a non-object schema's error names it."""
_TEXT_KEYWORDS = frozenset({
    "$id", "$schema", "$ref", "$comment", "$anchor", "$dynamicAnchor", "$dynamicRef",
    "title", "description", "pattern", "contentEncoding", "contentMediaType", "format"})
_FLAG_KEYWORDS = frozenset({"deprecated", "readOnly", "writeOnly", "uniqueItems"})


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


_Engine = validators.extend(Draft202012Validator, {
    "pattern": _re2_pattern, "patternProperties": _re2_pattern_properties})


def parse_schema_text(text: str) -> Any:
    """Decode schema text as Go's ``json.Unmarshal`` does (one value, nothing after it).

    Raises:
        SchemaProblem: when the text is not JSON.
    """
    try:
        return json.loads(text, parse_constant=_no_constant)
    except (ValueError, RecursionError) as err:
        raise SchemaProblem(str(err)) from None


def _no_constant(name: str) -> Any:
    raise ValueError(f"invalid character {name[0]!r} looking for beginning of value")


def schema_draft(schema: Any) -> str:
    """The draft URI a schema declares (2020-12 when absent).

    Raises:
        SchemaProblem: when the schema is not an object/boolean or names another draft.
    """
    if schema is None or isinstance(schema, bool):
        return DRAFT_2020_12
    if not isinstance(schema, dict):
        raise SchemaProblem(f"json: cannot unmarshal {json_kind(schema)} into Go value of "
                            f"type {_DECODE_TARGET}")
    _check_keyword_types(schema)
    declared = schema.get("$schema") or ""
    if declared not in ("", DRAFT_2020_12, *DRAFT_07):
        raise SchemaProblem(f'unsupported JSON schema draft "{declared}"')
    return declared or DRAFT_2020_12


def _check_keyword_types(schema: dict[str, Any]) -> None:
    """Go's first decode error among the top-level text and flag keywords (document
    order; null is no value). Deeper keyword errors are worded by the meta-schema check."""
    for key, value in schema.items():
        if value is None:
            continue
        if key in _TEXT_KEYWORDS and not isinstance(value, str):
            go_type = "string"
        elif key in _FLAG_KEYWORDS and not isinstance(value, bool):
            go_type = "bool"
        else:
            continue
        raise SchemaProblem(f"json: cannot unmarshal {json_kind(value)} into Go struct "
                            f"field .{key} of type {go_type}")


def load_schema(schema: Any) -> tuple[Any, str]:
    """A ready validator for ``schema`` and its draft URI (cached by the schema's JSON).

    Checking a schema against the meta-schema costs about a millisecond, far more than
    validating a small document; a pack evaluates the same schema on every run, so the
    checked validator is kept, keyed by the schema's JSON text in its own key order.

    Raises:
        SchemaProblem: when the schema is unusable (see :func:`schema_draft`) or invalid
            against the 2020-12 meta-schema.
    """
    try:
        key = json.dumps(schema, allow_nan=False)
    except (TypeError, ValueError, RecursionError):  # not plain JSON: check it uncached
        return _load_schema(schema)
    return _load_schema_text(key)


@functools.lru_cache(maxsize=256)
def _load_schema_text(text: str) -> tuple[Any, str]:
    return _load_schema(json.loads(text))


def _load_schema(schema: Any) -> tuple[Any, str]:
    draft = schema_draft(schema)
    if schema is None:  # jsonschema-go reads JSON null as the boolean false: nothing validates
        schema = False
    if isinstance(schema, dict) and draft in DRAFT_07:
        schema = {key: value for key, value in schema.items() if key != "$schema"}
    try:
        _Engine.check_schema(schema, format_checker=None)
    except SchemaError as err:
        raise SchemaProblem(err.message) from None
    return _Engine(schema), draft


def check_document(actual: str, schema: Any) -> Outcome:
    """Validate the actual text (one JSON value) against a decoded schema."""
    try:
        document = parse_document(actual)
    except DocumentError as err:
        return Outcome.error(f"parse actual JSON document: {err}", error=str(err))
    try:
        engine, draft = load_schema(schema)
    except SchemaProblem as err:
        return Outcome.error(f"parse JSON schema: {err}", error=str(err))
    return _validate(engine, draft, document)


def _validate(engine: Any, draft: str, document: Any) -> Outcome:
    try:
        problem = best_match(engine.iter_errors(document))
    except (Unresolvable, PatternError, RecursionError) as err:
        return Outcome.error(f"resolve JSON schema: {err}",
                             schema_draft=draft, error=str(err))
    if problem is None:
        return Outcome.passed(schema_draft=draft)
    return Outcome.failed("json schema validation failed", schema_draft=draft,
                          validation_error=problem.message, validation_target="actual_value")
