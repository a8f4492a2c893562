"""json_schema (docs/scoring.md §5.5): one JSON value validated with the 2020-12 engine; draft-07
accepted."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from unit.scoring.helpers import run_one

from evalfleet.scoring.validators.schema_decode import KIND_OF

DRAFT_07 = "http://json-schema.org/draft-07/schema#"
DRAFT_07_TLS = "https://json-schema.org/draft-07/schema#"
DRAFT_2020 = "https://json-schema.org/draft/2020-12/schema"

CASES = [
    ('{"a": 1}', '{"type": "object", "required": ["a"]}', "pass"),
    ('{"b": 1}', '{"type": "object", "required": ["a"]}', "fail"),
    ("7", '{"type": "integer"}', "pass"),
    ("1.0", '{"type": "integer"}', "pass"),
    ("1.5", '{"type": "integer"}', "fail"),
    ('  [1, 2]\n', '{"type": "array", "items": {"type": "number"}}', "pass"),
    ('{"a": 1}}', "{}", "pass"),
    ('"x"', "true", "pass"),
    ('"x"', "false", "fail"),
    ('"123"', '{"pattern": "^\\\\d+$"}', "pass"),
    ('"١٢٣"', '{"pattern": "^\\\\d+$"}', "fail"),
    ('{}', f'{{"$schema": "{DRAFT_2020}", "required": ["x"]}}', "fail"),
    ('{"x": 1}', f'{{"$schema": "{DRAFT_07}", "required": ["x"]}}', "pass"),
    ('{}', f'{{"$schema": "{DRAFT_07_TLS}", "required": ["x"]}}', "fail"),
    ('{"n": {"v": 2}}', '{"$defs": {"p": {"type": "object"}}, '
                        '"properties": {"n": {"$ref": "#/$defs/p"}}}', "pass"),
]


@pytest.mark.parametrize(("actual", "schema", "verdict"), CASES)
def test_validation(actual: str, schema: str, verdict: str) -> None:
    """The document passes iff it is valid against the schema (integers include 1.0)."""
    result = run_one("json_schema", actual, schema)

    assert (verdict, 1.0 if verdict == "pass" else 0.0) == (result.verdict,
                                                            result.normalized_score)


def test_failure_records_the_validator_message() -> None:
    """A failure says "json schema validation failed" and keeps the message as evidence."""
    result = run_one("json_schema", '{"b": 1}', '{"required": ["a"]}')

    assert result.reason == "json schema validation failed"
    assert result.evidence["validation_error"] == "'a' is a required property"
    assert result.evidence["schema_draft"] == DRAFT_2020


def test_draft_07_is_recorded() -> None:
    """A draft-07 schema is validated but its draft URI is what the evidence records."""
    result = run_one("json_schema", "{}", f'{{"$schema": "{DRAFT_07}"}}')

    assert (result.verdict, result.evidence["schema_draft"]) == ("pass", DRAFT_07)


@pytest.mark.parametrize("actual", ["", "   ", "{", '{"a": 1} x', "1 2", "123abc", "NaN",
                                    "{'a': 1}"])
def test_actual_not_one_json_value(actual: str) -> None:
    """A malformed actual, or a second value after it, is the agent's error."""
    result = run_one("json_schema", actual, "{}")

    assert (result.state, result.outcome_class) == ("error", "evaluator_error")
    assert result.reason.startswith("parse actual JSON document")


@pytest.mark.parametrize(("schema", "reason"), [
    ('{"$schema": "http://json-schema.org/draft-04/schema#"}', "unsupported JSON schema draft"),
    (f'{{"$schema": "{DRAFT_2020}#"}}', "unsupported JSON schema draft"),
    ("{not json", "parse JSON schema"),
    ("{} {}", "parse JSON schema"),
    ('{"type": 5}', "parse JSON schema"),
    ('"a string"', "parse JSON schema"),
    ('{"$schema": 7}', "parse JSON schema"),
])
def test_schema_problems_are_pack_errors(schema: str, reason: str) -> None:
    """An unusable schema or an unsupported $schema draft is the pack's error."""
    result = run_one("json_schema", "{}", schema)

    assert (result.state, result.outcome_class) == ("error", "pack_error")
    assert reason in result.reason


def test_bad_actual_is_reported_before_bad_schema() -> None:
    """AgentClash parses the actual document first."""
    result = run_one("json_schema", "nope", "{nope")

    assert result.reason.startswith("parse actual JSON document")


def test_config_is_ignored() -> None:
    """Config is never read."""
    assert run_one("json_schema", "1", "{}", {"anything": True}).verdict == "pass"


@given(st.text(), st.text())
def test_never_raises(actual: str, schema: str) -> None:
    """Arbitrary strings give a result, never an exception."""
    assert run_one("json_schema", actual, schema).state in {"available", "error"}


GO_STRUCT = (
    'struct { Type json.RawMessage "json:\\"type,omitempty\\""; Const json.RawMessage '
    '"json:\\"const,omitempty\\""; MinLength *jsonschema.integer "json:\\"minLength,omitempty'
    '\\""; MaxLength *jsonschema.integer "json:\\"maxLength,omitempty\\""; MinItems '
    '*jsonschema.integer "json:\\"minItems,omitempty\\""; MaxItems *jsonschema.integer '
    '"json:\\"maxItems,omitempty\\""; MinProperties *jsonschema.integer "json:\\"'
    'minProperties,omitempty\\""; MaxProperties *jsonschema.integer "json:\\"maxProperties,'
    'omitempty\\""; MinContains *jsonschema.integer "json:\\"minContains,omitempty\\""; '
    'MaxContains *jsonschema.integer "json:\\"maxContains,omitempty\\""; '
    '*jsonschema.schemaWithoutMethods }')


@pytest.mark.parametrize(("schema", "message"), [
    ("5", f"json: cannot unmarshal number into Go value of type {GO_STRUCT}"),
    ('"x"', f"json: cannot unmarshal string into Go value of type {GO_STRUCT}"),
    ("[1]", f"json: cannot unmarshal array into Go value of type {GO_STRUCT}"),
    ('{"$schema": 5}', "json: cannot unmarshal number into Go struct field "
                       ".schemaWithoutMethods.$schema of type string"),
    ('{"title": 3, "$schema": true}', "json: cannot unmarshal number into Go struct field "
                                      ".schemaWithoutMethods.title of type string"),
    ('{"uniqueItems": "yes"}', "json: cannot unmarshal string into Go struct field "
                               ".schemaWithoutMethods.uniqueItems of type bool"),
])
def test_undecodable_schemas_fail_as_jsonschema_go_decodes_them(schema: str,
                                                                message: str) -> None:
    """jsonschema-go v0.3.0's decode errors, recorded by decoding into its own struct
    under Go 1.19: a non-object names the anonymous struct, a bad keyword its field. The
    field paths are Go 1.25's (AgentClash ships Go 1.25): its ``addErrorContext`` names
    the embedded ``schemaWithoutMethods``, where Go 1.19 printed ``.$schema``."""
    result = run_one("json_schema", "{}", schema)

    assert (result.state, result.outcome_class) == ("error", "pack_error")
    assert result.reason == f"parse JSON schema: {message}"


@pytest.mark.parametrize(("actual", "schema", "verdict"), [
    ('"a"', '{"minLength": -1}', "pass"),
    ('"a"', '{"type": "text"}', "fail"),
    ('"a"', '{"type": ["text", "string"]}', "pass"),
    ("6", '{"multipleOf": 0}', "fail"),
    ("6", '{"multipleOf": 1.5}', "pass"),
    ("6.5", '{"multipleOf": 1.5}', "fail"),
    ("1e308", '{"multipleOf": 1e-308}', "fail"),
    ("1.0", '{"type": ["integer"]}', "pass"),
    ('{"a": 1}', '{"Required": ["b"]}', "fail"),
    ('{"a": 1}', '{"required": ["a"], "title": null}', "pass"),
])
def test_no_meta_schema_and_go_s_keyword_rules(actual: str, schema: str, verdict: str) -> None:
    """jsonschema-go checks no meta-schema: what decodes is used as it is (an unknown
    ``type`` matches nothing, ``multipleOf: 0`` no number, ``Required`` is ``required``)."""
    assert verdict == run_one("json_schema", actual, schema).verdict


def test_a_schema_resolve_refuses_is_a_pack_error_with_its_draft() -> None:
    """``resolve JSON schema: …`` keeps the draft and jsonschema-go's text as evidence."""
    result = run_one("json_schema", '"a"', f'{{"$schema": "{DRAFT_07}", "$ref": "x.json"}}')

    assert (result.state, result.outcome_class) == ("error", "pack_error")
    assert result.reason == ("resolve JSON schema: loading /x.json: cannot resolve remote "
                             "schemas: no loader passed to Schema.Resolve")
    assert result.evidence["schema_draft"] == DRAFT_07


def test_a_syntax_error_is_go_s() -> None:
    """Schema text that is not JSON is reported with Go's scanner's words."""
    result = run_one("json_schema", "{}", '{"a": }')

    assert result.reason == ("parse JSON schema: invalid character '}' looking for "
                             "beginning of value")


@pytest.mark.parametrize(("actual", "schema", "verdict"), [
    ("9007199254740993", '{"const": 9007199254740992}', "pass"),
    ("[9007199254740993, 9007199254740992]", '{"uniqueItems": true}', "fail"),
    ("3", '{"type": "integer", "enum": [3.0]}', "pass"),
])
def test_the_document_s_numbers_are_float64(actual: str, schema: str, verdict: str) -> None:
    """AgentClash decodes the document with float64 numbers (``parseJSONDocument``)."""
    assert verdict == run_one("json_schema", actual, schema).verdict


def test_an_integer_beyond_float64_is_the_agent_s_error() -> None:
    """Go cannot decode such a number as a float64: ``parse actual JSON document``."""
    result = run_one("json_schema", "1" + "0" * 400, "{}")

    assert (result.state, result.outcome_class) == ("error", "evaluator_error")
    assert result.reason.startswith("parse actual JSON document: json: cannot unmarshal number 1")


_KEYS = st.sampled_from([*sorted(KIND_OF), "x", "Minimum"])
_SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(-(10**20), 10**20),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(["#", "#/properties", "#/$defs/a", "a.json", "http://x/y", "(", "string",
                     "#A", "A", "%zz", ":x"]))
_VALUES = st.recursive(_SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.one_of(_KEYS, st.text(max_size=3)),
                                                 inner, max_size=4)), max_leaves=12)


@given(st.dictionaries(_KEYS, _VALUES, max_size=5), _VALUES)
def test_keyword_shaped_schemas_never_raise(schema: dict[str, Any], document: Any) -> None:
    """Schemas built from real keywords with arbitrary values give a result, never an
    exception (decode, Resolve and validation each answer)."""
    result = run_one("json_schema", json.dumps(document), json.dumps(schema))

    assert result.state in {"available", "error"}


@pytest.mark.parametrize(("schema", "document", "state"), [
    ({"dependentRequired": {"$dynamicRef": None}}, {"$dynamicRef": None}, "available"),
    ({"dependentRequired": {"a": [None]}}, {"a": 1}, "available"),
    ({"required": [None]}, {"": 1}, "available"),
])
def test_nulls_inside_keyword_containers_decode_as_go_does(schema: dict[str, Any],
                                                           document: Any, state: str) -> None:
    """A null in a ``map[string][]string`` is a nil slice (nothing required), in a
    ``[]string`` the empty string: hypothesis found the first raising ``TypeError``."""
    result = run_one("json_schema", json.dumps(document), json.dumps(schema))
    assert result.state == state, result.reason


@pytest.mark.parametrize(("actual", "verdict"), [
    ("[[1], [true], [1]]", "fail"),  # jsonschema's sorted path took it for unique
    ("[1, true]", "pass"),
    ('[{"a": 1}, {"a": 1.0}]', "fail"),
    ('["1", 1]', "pass"),
    ("[null, null]", "fail"),
    ("[[], {}]", "pass"),
    ('[{"a": [1, 2]}, {"a": [2, 1]}]', "pass"),
    ('[{"a": 1, "b": 2}, {"b": 2, "a": 1}]', "fail"),
])
def test_unique_items_as_jsonschema_go_compares_them(actual: str, verdict: str) -> None:
    assert run_one("json_schema", actual, '{"uniqueItems": true}').verdict == verdict


@pytest.mark.timeout(60)
def test_unique_items_of_a_large_mixed_array() -> None:
    """Items jsonschema cannot sort were compared pair by pair: 23 KB took 10 s, 200 KB
    the task's time limit (found by a red-team pass). Hashed, 1.3 MB is quick."""
    items = ["x", *range(200_000)]
    assert run_one("json_schema", json.dumps(items), '{"uniqueItems": true}').verdict == "pass"
    assert run_one("json_schema", json.dumps([*items, 7]),
                   '{"uniqueItems": true}').verdict == "fail"
