"""Stringification of resolved JSON values (docs/scoring.md §4.3 and §17–17.4)."""

from __future__ import annotations

from typing import Any

import pytest

from evalfleet.scoring.compat.textform import go_json, go_number, loose_string, stringify


@pytest.mark.parametrize(("value", "text"), [
    pytest.param(42, "42", id="integer"),
    pytest.param(42.0, "42", id="integral-float-no-dot-zero"),
    pytest.param(3.5, "3.5", id="fraction"),
    pytest.param(-3.5, "-3.5", id="negative"),
    pytest.param(0, "0", id="zero"),
    pytest.param(100000, "100000", id="exponent-5-plain"),
    pytest.param(123456.7, "123456.7", id="exponent-5-with-fraction"),
    pytest.param(1e6, "1e+06", id="exponent-6-switches"),
    pytest.param(1000000, "1e+06", id="int-million"),
    pytest.param(1234567, "1.234567e+06", id="mantissa-digits"),
    pytest.param(0.0001, "0.0001", id="exponent-minus-4-plain"),
    pytest.param(0.00001, "1e-05", id="exponent-minus-5-switches"),
    pytest.param(0.000123, "0.000123", id="small-plain"),
    pytest.param(2**30, "1.073741824e+09", id="pow-2-30"),
    pytest.param(1e21, "1e+21", id="large"),
    pytest.param(1e100, "1e+100", id="three-digit-exponent"),
    pytest.param(0.1 + 0.2, "0.30000000000000004", id="shortest-round-trip"),
    pytest.param(2**53 + 1, "9.007199254740992e+15", id="int-beyond-float64-precision"),
])
def test_go_number(value: float, text: str) -> None:
    """Numbers print like Go's %v of a float64: shortest digits, exponent below -4 or from 6."""
    assert go_number(value) == text


@pytest.mark.parametrize(("value", "text"), [
    pytest.param({"b": 1, "a": 2}, '{"a":2,"b":1}', id="sorted-keys-compact"),
    pytest.param({"s": "<a>&b"}, '{"s":"\\u003ca\\u003e\\u0026b"}', id="html-escaped"),
    pytest.param({"<k>": 1}, '{"\\u003ck\\u003e":1}', id="html-escaped-key"),
    pytest.param({"n": 1000000}, '{"n":1000000}', id="json-million-plain"),
    pytest.param([1e20], "[100000000000000000000]", id="json-1e20-plain"),
    pytest.param([1e21], "[1e+21]", id="json-1e21-exponent"),
    pytest.param([10**22], "[1e+22]", id="json-int-1e22-exponent"),
    pytest.param([0.000001], "[0.000001]", id="json-1e-6-plain"),
    pytest.param([1e-7], "[1e-7]", id="json-1e-7-short-exponent"),
    pytest.param([3.5, 42], "[3.5,42]", id="json-plain-numbers"),
    pytest.param([True, False, None], "[true,false,null]", id="literals"),
    pytest.param({"a": {"d": [], "c": {}}}, '{"a":{"c":{},"d":[]}}', id="nested"),
    pytest.param(["é\u2028"], '["é\\u2028"]', id="unicode-kept-line-separator-escaped"),
    pytest.param(["a\nb\t\"c\\"], '["a\\nb\\t\\"c\\\\"]', id="control-escapes"),
])
def test_go_json(value: Any, text: str) -> None:
    """Objects and arrays serialize like Go's json.Marshal: sorted, compact, HTML-safe."""
    assert go_json(value) == text


@pytest.mark.parametrize(("value", "text"), [
    pytest.param("plain", "plain", id="string"),
    pytest.param({"value": "v", "content": "c", "text": "t", "answer": "a"}, "v",
                 id="value-first"),
    pytest.param({"content": "c", "text": "t", "answer": "a"}, "c", id="content-second"),
    pytest.param({"text": "t", "answer": "a"}, "t", id="text-third"),
    pytest.param({"answer": "x", "other": 1}, "x", id="answer-despite-other-keys"),
    pytest.param({"value": {"text": "deep"}}, "deep", id="recursive"),
    pytest.param(["only"], "only", id="one-element-array"),
    pytest.param([{"answer": "a"}], "a", id="one-element-array-of-object"),
    pytest.param(["a", "b"], None, id="two-element-array"),
    pytest.param({"other": "x"}, None, id="object-without-loose-key"),
    pytest.param({"value": 5}, None, id="loose-key-not-string"),
    # extractLooseString tries the next key when one does not collapse (engine_util.go)
    pytest.param({"value": 5, "text": "hi"}, "hi", id="next-key-after-non-string"),
    pytest.param({"value": {"x": 1}, "content": ["a", "b"], "answer": ["y"]}, "y",
                 id="last-key-after-two-misses"),
    pytest.param(5, None, id="number"),
    pytest.param(None, None, id="null"),
])
def test_loose_string(value: Any, text: str | None) -> None:
    """The loose-string collapse: string, value/content/text/answer, one-element array."""
    assert loose_string(value) == text


@pytest.mark.parametrize(("value", "text"), [
    pytest.param({"answer": "x", "other": 1}, "x", id="rule1-collapse-trap"),
    pytest.param("s", "s", id="rule1-string"),
    pytest.param(True, "true", id="rule2-true"),
    pytest.param(False, "false", id="rule2-false"),
    pytest.param(None, "null", id="rule2-null"),
    pytest.param(42, "42", id="rule3-int"),
    pytest.param(1e6, "1e+06", id="rule3-million"),
    pytest.param(0.00001, "1e-05", id="rule3-small"),
    pytest.param({"z": 1000000, "a": "<&>"}, '{"a":"\\u003c\\u0026\\u003e","z":1000000}',
                 id="rule4-object"),
    pytest.param([1, "x"], '[1,"x"]', id="rule4-array"),
    pytest.param([5], "[5]", id="rule4-one-element-non-string"),
    pytest.param({"value": 7}, '{"value":7}', id="rule4-loose-key-non-string"),
])
def test_stringify(value: Any, text: str) -> None:
    """stringify applies loose string, then literals, then %v numbers, then Go JSON."""
    assert stringify(value) == text
