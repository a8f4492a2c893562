"""A JSON schema decoded as google/jsonschema-go v0.3.0 decodes it (``schema.go``,
``util.go``), with encoding/json's errors worded as Go 1.25 words them."""

from __future__ import annotations

from typing import Any

import pytest

from evalfleet.scoring.validators.schema_decode import DECODE_TARGET, DecodeError, decode_schema
from evalfleet.scoring.validators.schemas import parse_schema_text

EMBEDDED = "Go struct field .schemaWithoutMethods"


def decode(text: str) -> Any:
    return decode_schema(parse_schema_text(text))


@pytest.mark.parametrize(("text", "message"), [
    ("5", f"json: cannot unmarshal number into Go value of type {DECODE_TARGET}"),
    ('{"minimum": "x"}', f"json: cannot unmarshal string into {EMBEDDED}.minimum of type "
                         "float64"),
    ('{"minimum": 1e400}', f"json: cannot unmarshal number 1e400 into {EMBEDDED}.minimum of "
                           "type float64"),
    ('{"required": "a"}', f"json: cannot unmarshal string into {EMBEDDED}.required of type "
                          "[]string"),
    ('{"required": ["a", 1]}', f"json: cannot unmarshal number into {EMBEDDED}.required of "
                               "type string"),
    ('{"enum": 5}', f"json: cannot unmarshal number into {EMBEDDED}.enum of type "
                    "[]interface {}"),
    ('{"$vocabulary": {"x": 1}}', f"json: cannot unmarshal number into {EMBEDDED}.$vocabulary"
                                  " of type bool"),
    ('{"dependentRequired": {"a": "b"}}', f"json: cannot unmarshal string into {EMBEDDED}."
                                          "dependentRequired of type []string"),
    ('{"allOf": {}}', f"json: cannot unmarshal object into {EMBEDDED}.allOf of type "
                      "[]*jsonschema.Schema"),
    ('{"properties": []}', f"json: cannot unmarshal array into {EMBEDDED}.properties of type "
                           "map[string]*jsonschema.Schema"),
    ('{"properties": {"a": {"minimum": "x"}}}', f"json: cannot unmarshal string into "
     f"{EMBEDDED}.properties.schemaWithoutMethods.minimum of type float64"),
    ('{"not": {"items": 5}}', f"json: cannot unmarshal number into {EMBEDDED}.not."
     f"schemaWithoutMethods.items of type {DECODE_TARGET}"),
    ('{"default": 1e400}', "json: cannot unmarshal number 1e400 into Go value of type float64"),
])
def test_type_errors_name_the_go_1_25_field_path(text: str, message: str) -> None:
    """A keyword of the wrong type is encoding/json's type error with the full path."""
    with pytest.raises(DecodeError) as raised:
        decode(text)

    assert message == str(raised.value)


@pytest.mark.parametrize(("text", "message"), [
    ('{"minLength": 1.5}', "not an integer value"),
    ('{"minLength": 2.0}', None),
    ('{"minLength": 1e3}', "cannot be unmarshaled into an int"),
    ('{"minLength": "2"}', "cannot be unmarshaled into an int"),
    ('{"minLength": "2.5"}', "not a number"),
    ('{"minLength": true}', "cannot be unmarshaled into an int"),
    ('{"maxItems": 2147483648}', "integer is out of range"),
    ('{"maxItems": -2147483648}', None),
    ('{"maxItems": 1.5e400}', "not a number"),
    ('{"maxItems": 99999999999999999999}', "cannot be unmarshaled into an int"),
])
def test_integer_keywords_stop_the_decode(text: str, message: str | None) -> None:
    """jsonschema-go's ``integer.UnmarshalJSON``: an int32, ``.0`` allowed."""
    if message is None:
        decode(text)
        return
    with pytest.raises(DecodeError) as raised:
        decode(text)
    assert message == str(raised.value)


def test_an_error_that_stops_the_decode_wins_over_a_kept_one() -> None:
    """A type error is kept while decoding goes on; a nested schema's error stops it."""
    with pytest.raises(DecodeError) as raised:
        decode('{"minimum": "x", "properties": {"a": {"maxLength": 1.5}}}')

    assert str(raised.value) == "not an integer value"


def test_the_first_kept_error_is_reported() -> None:
    """Of two type errors, the first in key order."""
    with pytest.raises(DecodeError) as raised:
        decode('{"title": 3, "description": 4}')

    assert ".schemaWithoutMethods.title of" in str(raised.value)


@pytest.mark.parametrize(("text", "message"), [
    ('{"type": 5}', 'invalid value for "type": "5"'),
    ('{"type": null}', 'invalid value for "type": "null"'),
    ('{"type": {"a": "é"}}', 'invalid value for "type": "{\\"a\\":\\"é\\"}"'),
    ('{"type": ["string", 5]}', "json: cannot unmarshal number into Go value of type string"),
])
def test_type_must_be_a_string_or_a_list_of_strings(text: str, message: str) -> None:
    """``type`` is checked after the struct (``schema.go``: ``%q`` of its raw JSON)."""
    with pytest.raises(DecodeError) as raised:
        decode(text)

    assert message == str(raised.value)


def test_the_decoded_form() -> None:
    """Keywords by JSON name (case-insensitive match), nulls unset, nil subschemas kept,
    unknown keys as given, booleans and null as schemas."""
    got = decode('{"Minimum": 1, "allOf": [null, true], "title": null, "x-extra": null}')
    assert got == {"minimum": 1, "allOf": [None, True], "x-extra": None}
    assert decode_schema(None) is False
    assert decode_schema(True) is True


def test_a_later_null_unsets_pointers_but_not_strings() -> None:
    """Go sets a pointer, slice or map field to nil on ``null``; a string keeps its value."""
    got = decode('{"minimum": 1, "Minimum": null, "title": "t", "Title": null, '
                 '"required": ["a"], "Required": null}')

    assert got == {"title": "t"}
