"""jsonschema-go v0.3.0's ``Schema.Resolve`` checks (``resolve.go``, ``json_pointer.go``)."""

from __future__ import annotations

import pytest

from evalfleet.scoring.validators.schema_decode import decode_schema
from evalfleet.scoring.validators.schema_resolve import ResolveError, resolve
from evalfleet.scoring.validators.schemas import parse_schema_text

ANON = "jsonschema.Schema: <anonymous schema>: "


def resolve_text(text: str) -> None:
    resolve(decode_schema(parse_schema_text(text)))


@pytest.mark.parametrize(("text", "message"), [
    ('{"allOf": [{}, null]}', "jsonschema: schema at /allOf/1 is nil"),
    ('{"properties": {"a/b": {"items": {"$defs": {"x": null}}}}}',
     "jsonschema: schema at /properties/a~1b/items/$defs/x is nil"),
    ('{"$defs": {}, "definitions": {}}',
     "both Defs and Definitions are set; at most one should be"),
    ('{"$vocabulary": {}}', ANON + "cannot validate a schema with $vocabulary"),
    ('{"$id": "http://e.com/s", "allOf": [{"$anchor": "A", "pattern": "("}]}',
     "jsonschema.Schema: anchor A: pattern: error parsing regexp: missing closing ): `(`"),
    ('{"patternProperties": {"(": {}, "a**": {}}}',
     ANON + 'patternProperties["("]: error parsing regexp: missing closing ): `(`\n'
     + ANON + 'patternProperties["a**"]: error parsing regexp: invalid nested repetition '
     "operator: `**`"),
    ('{"$id": "s.json"}', '$id s.json does not resolve to an absolute URI (base is "")'),
    ('{"$id": "http://e.com/s#f"}', "$id http://e.com/s#f must not have a fragment"),
    ('{"$id": "%zz"}', 'parse "%zz": invalid URL escape "%zz"'),
    ('{"$ref": "other.json"}', "loading /other.json: cannot resolve remote schemas: no loader"
                               " passed to Schema.Resolve"),
    ('{"$id": "http://e.com/a/s", "$ref": "../b.json"}', "loading http://e.com/b.json: cannot"
     " resolve remote schemas: no loader passed to Schema.Resolve"),
    ('{"$ref": "#nope"}', 'no anchor "nope" in <anonymous schema>'),
    ('{"$ref": ":x"}', 'parse ":x": missing protocol scheme'),
    ('{"$dynamicRef": "#/allOf/01"}', 'JSON Pointer "/allOf/01": segment "01" has leading '
                                      "zeroes"),
    ('{"$ref": "#/allOf/2", "allOf": [{}]}', 'JSON Pointer "/allOf/2": index 2 is out of '
                                             "bounds for array of length 1"),
    ('{"$ref": "#/allOf/-"}', "JSON Pointer \"/allOf/-\": the JSON Pointer array segment '-' "
                              "is not supported"),
    ('{"$ref": "#/properties"}', 'JSON Pointer "/properties": does not refer to a schema, but'
                                 " to a map[string]*jsonschema.Schema"),
    ('{"$ref": "#/$defs/x"}', 'JSON Pointer "/$defs/x": no key "x" in map'),
    ('{"$ref": "#/foo"}', 'JSON Pointer "/foo": no schema field "foo"'),
    ('{"$ref": "#/items/type"}', 'JSON Pointer "/items/type": navigated to nil reference'),
    ('{"$ref": "#/minimum/x", "minimum": 1}', 'JSON Pointer "/minimum/x": navigated to '
                                              "non-Schema float64"),
    ('{"$ref": "#/title/x", "title": "t"}', 'JSON Pointer "/title/x": value t (string) is not'
                                            " a schema, slice or map"),
])
def test_resolve_errors_are_jsonschema_go_s(text: str, message: str) -> None:
    """Each step's first error (the local checks all, joined), worded as jsonschema-go."""
    with pytest.raises(ResolveError) as raised:
        resolve_text(text)

    assert message == str(raised.value)


@pytest.mark.parametrize("text", [
    '{"$defs": {"p": {"type": "object"}}, "properties": {"n": {"$ref": "#/$defs/p"}}}',
    '{"$id": "http://e.com/s", "$defs": {"a": {"$anchor": "A"}}, "$ref": "#A"}',
    '{"$id": "http://e.com/s", "$ref": "http://e.com/s#/$defs/a", "$defs": {"a": {}}}',
    '{"$id": "http://e.com/s", "allOf": [{"$id": "t.json"}], "$ref": "t.json"}',
    '{"$schema": "https://json-schema.org/draft/2020-12/schema", "$vocabulary": {}}',
    '{"$ref": "#", "definitions": {}}',
    '{"$ref": "#/allOf/0/not", "allOf": [false]}',
    '{"pattern": "", "minLength": -1}',
])
def test_schemas_that_resolve(text: str) -> None:
    """References to the schema itself, its ``$id``s and anchors resolve."""
    resolve_text(text)
