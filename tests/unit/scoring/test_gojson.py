"""Go's ``encoding/json`` error texts: ``json.Unmarshal`` and ``json.Decoder`` (+ ``More``).

Every row was recorded from Go 1.19's ``encoding/json`` (the texts are unchanged through
1.25): Unmarshal's error, and the Decoder's (``MORE`` when ``Decode`` succeeded and ``More``
reported another value, ``OK`` when it did not).
"""

from __future__ import annotations

import math

import pytest

from evalfleet.scoring.compat import gojson
from evalfleet.scoring.compat.gojsonscan import JSONSyntaxError, decoder_more, decoder_value

GO = [
    ('  ',
     'unexpected end of JSON input',
     'EOF'),
    ('"\\u12G4"',
     "invalid character 'G' in \\u hexadecimal character escape",
     "invalid character 'G' in \\u hexadecimal character escape"),
    ('"\\x"',
     "invalid character 'x' in string escape code",
     "invalid character 'x' in string escape code"),
    ('"abc',
     'unexpected end of JSON input',
     'unexpected EOF'),
    ('"tab\tin"',
     "invalid character '\\t' in string literal",
     "invalid character '\\t' in string literal"),
    ('-',
     "invalid character ' ' in numeric literal",
     'unexpected EOF'),
    ('-0.5e+3',
     'OK',
     'OK'),
    ('01',
     "invalid character '1' after top-level value",
     'MORE'),
    ('1 2',
     "invalid character '2' after top-level value",
     'MORE'),
    ('1.',
     "invalid character ' ' after decimal point in numeric literal",
     'unexpected EOF'),
    ('1e',
     "invalid character ' ' in exponent of numeric literal",
     'unexpected EOF'),
    ('[1 2]',
     "invalid character '2' after array element",
     "invalid character '2' after array element"),
    ('[1, 2',
     'unexpected end of JSON input',
     'unexpected EOF'),
    ('[1,]',
     "invalid character ']' looking for beginning of value",
     "invalid character ']' looking for beginning of value"),
    ('not json',
     "invalid character 'o' in literal null (expecting 'u')",
     "invalid character 'o' in literal null (expecting 'u')"),
    ('nul',
     "invalid character ' ' in literal null (expecting 'l')",
     'unexpected EOF'),
    ('tru',
     "invalid character ' ' in literal true (expecting 'e')",
     'unexpected EOF'),
    ('{"a" 1}',
     "invalid character '1' after object key",
     "invalid character '1' after object key"),
    ('{"a": 1,}',
     "invalid character '}' looking for beginning of object key string",
     "invalid character '}' looking for beginning of object key string"),
    ('{"a": 1} x',
     "invalid character 'x' after top-level value",
     'MORE'),
    ('{"a":1}}',
     "invalid character '}' after top-level value",
     'OK'),
    ('{1: 2}',
     "invalid character '1' looking for beginning of object key string",
     "invalid character '1' looking for beginning of object key string"),
]


def _unmarshal(text: str) -> str:
    try:
        gojson.unmarshal(text)
    except gojson.UnmarshalError as err:
        return str(err)
    return "OK"


def _decode(text: str) -> str:
    try:
        _, rest = decoder_value(text)
    except JSONSyntaxError as err:
        return str(err)
    return "MORE" if decoder_more(rest) else "OK"


@pytest.mark.parametrize(("text", "unmarshal", "decoder"), GO)
def test_errors_are_worded_as_go_words_them(text: str, unmarshal: str, decoder: str) -> None:
    """Unmarshal and Decoder report what Go reports for the same text."""
    assert (_unmarshal(text), _decode(text)) == (unmarshal, decoder)


@pytest.mark.parametrize(("text", "position"), [
    ('{"a": 1,}', 8), ("[1 2]", 3), ('"\u00e9" x', 4), ("1 2", 2), ("-", 1), ("[1,", None),
])
def test_syntax_errors_carry_the_failing_characters_position(text: str,
                                                             position: int | None) -> None:
    """Where the failing character is (end of text: None), to report its line."""
    with pytest.raises(gojson.UnmarshalError) as raised:
        gojson.unmarshal(text)
    assert raised.value.position == position


@pytest.mark.parametrize(("value", "expected"), [
    (10 ** 400, math.inf), (-(10 ** 400), -math.inf), (7, 7.0), (0.5, 0.5)])
def test_as_float64_takes_integers_past_its_range(value: int | float, expected: float) -> None:
    """A huge integer is ±Inf (``math.copysign`` converted it first, and raised)."""
    assert gojson.as_float64(value) == expected
    assert gojson.equal(value, value)
