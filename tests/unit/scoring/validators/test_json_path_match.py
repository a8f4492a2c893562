"""json_path_match (docs/scoring.md §5.6): the exact path subset, existence checks and the five
comparators."""

from __future__ import annotations

import contextlib
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from unit.scoring.helpers import run_one

from evalfleet.scoring.compat.goquote import QuoteError, unquote
from evalfleet.scoring.compat.jsondoc import parse_document
from evalfleet.scoring.compat.jsonpath import PathError, lookup

DOC = json.dumps({
    "name": "ada", "n": 10, "f": 2.5, "big": 42, "tags": ["x", 1, {"k": "v"}],
    "nested": {"a-b_c": {"0": "zero"}}, "list": [[1, 2], [3]], "odd key": True,
    "é": "accent", "nums": [1, 2.0], "nil": None, "s": "10",
})


def expect(path: str, comparator: str | None = None, value: Any = None, **extra: Any) -> str:
    """An expectation object as JSON text (comparator/value omitted when None)."""
    body: dict[str, Any] = {"path": path, **extra}
    if comparator is not None:
        body["comparator"] = comparator
    if value is not None:
        body["value"] = value
    return json.dumps(body)


PATHS = [
    ("$.list", True, [[1, 2], [3]]),
    ("$.name", True, "ada"),
    ("$.nested.a-b_c", True, {"0": "zero"}),
    ('$.nested["a-b_c"]["0"]', True, "zero"),
    ("$.missing['ab']", False, None),
    ("$.tags[1]['k']", False, None),
    ("$['n']", True, 10),
    ("$.nested.a-b_c[`0`]", False, None),  # only ' and " quote: the key is `0` itself
    ('$["odd key"]', True, True),
    ("$[odd key]", True, True),
    ('$["\\u00e9"]', True, "accent"),
    ("$.tags[2].k", True, "v"),
    ("$.list[0][1]", True, 2),
    ("$.tags[ 1 ]", True, 1),
    ("$.tags[+1]", True, 1),
    ("$.tags[-1]", False, None),
    ("$.tags[3]", False, None),
    ("$.name[0]", False, None),
    ("$.tags.k", False, None),
    ("$.nested.a-b_c[0]", False, None),
    ("$.missing", False, None),
    ("$.missing.", False, None),
    ("$.nil", True, None),
    ("  $.n  ", True, 10),
]
def test_root_is_the_whole_document() -> None:
    """``$`` alone resolves to the document itself."""
    assert lookup([1], "$") == (True, [1])


@pytest.mark.parametrize(("path", "exists", "value"), PATHS)
def test_path_subset(path: str, exists: bool, value: Any) -> None:
    """Names, indexes, quoted and bare keys; misses are "does not exist", never errors."""
    document = parse_document(DOC)

    assert lookup(document, path) == (exists, value if exists else None)


@pytest.mark.parametrize(("path", "message"), [
    ("", "path is empty"),
    ("name", r"path must start with '\$'"),
    ("$.", "missing property name"),
    ("$..name", "missing property name"),
    ("$[", "unterminated bracket"),
    ("$[]", "empty bracket"),
    ("$[  ]", "empty bracket"),
    ("$!", "unexpected token"),
    ("$.name!", "unexpected token"),
    ("$['ab']", "invalid quoted property"),
    ('$["a', "unterminated bracket"),
    ('$["a"b"]', "invalid quoted property"),
    ('$["\\q"]', "invalid quoted property"),
    ("$.é", "missing property name"),
    ("$.tags[0]x", "unexpected token"),
])
def test_path_syntax_errors(path: str, message: str) -> None:
    """Malformed paths are errors with Go's messages."""
    with pytest.raises(PathError, match=message):
        lookup(parse_document(DOC), path)


CASES = [
    ("$.name", "pass", ""),
    ("$.missing", "fail", "json path did not resolve to a value"),
    (expect("$.n"), "pass", ""),
    (expect("$.n", value=10.0), "pass", ""),
    (expect("$.n", value=10), "pass", ""),
    (expect("$.n", value="10"), "fail", "json path value did not equal expected value"),
    (expect("$.s", value=10), "fail", "json path value did not equal expected value"),
    (expect("$.nums", value=[1, 2]), "fail", "json path value did not equal expected value"),
    (expect("$.nums", value=[1, 2.0]), "pass", ""),
    (expect("$.tags[2]", value={"k": "v"}), "pass", ""),
    (expect("$.name", "equals", "ada"), "pass", ""),
    (expect("$.missing", "equals", 1), "fail", "json path did not resolve to a value"),
    (expect("$.name", "contains", "d"), "pass", ""),
    (expect("$.name", "contains", "z"), "fail",
     "json path value did not contain expected substring"),
    (expect("$.tags", "contains", 1.0), "pass", ""),
    (expect("$.tags", "contains", {"k": "v"}), "pass", ""),
    (expect("$.tags", "contains", "y"), "fail", "json path array did not contain expected value"),
    (expect("$.big", "contains", 4), "pass", ""),
    (expect("$.f", "contains", "5"), "fail", "json path value did not contain expected value"),
    (expect("$.nested", "contains", "zero"), "pass", ""),
    (expect("$.n", "greater_than", 9.5), "pass", ""),
    (expect("$.n", "greater_than", 10), "fail",
     "json path value was not greater than expected value"),
    (expect("$.n", "less_than", 10.5), "pass", ""),
    (expect("$.n", "less_than", 10), "fail", "json path value was not less than expected value"),
    (expect("$.nil", "exists"), "pass", ""),
    (expect("$.missing", "exists", 3), "fail", "json path did not resolve to a value"),
    (expect("$.n", "  ", 10), "pass", ""),
    (expect("$.n", None, None, comparator_note="extra keys ignored"), "pass", ""),
    ('{"PATH": "$.n", "Value": 10}', "pass", ""),
    ('  {"path": "$.n", "value": null}  ', "pass", ""),
]


@pytest.mark.parametrize(("expected", "verdict", "reason"), CASES)
def test_comparators(expected: str, verdict: str, reason: str) -> None:
    """Existence, float equality of numbers, deep equality, contains and ordering."""
    result = run_one("json_path_match", DOC, expected)

    assert (result.verdict, result.reason) == (verdict, reason)
    assert result.normalized_score == (1.0 if verdict == "pass" else 0.0)


def test_numbers_are_kept_exact() -> None:
    """Contains on a non-string compares literal JSON text (4.50 contains 50)."""
    result = run_one("json_path_match", '{"p": 4.50}', expect("$.p", "contains", 50))

    assert result.verdict == "pass"


@pytest.mark.parametrize(("expected", "outcome_class", "reason"), [
    ("", "pack_error", "parse json_path_match expectation: expectation is empty"),
    ("name", "pack_error", "parse json_path_match expectation"),
    ("[1]", "pack_error", "parse json_path_match expectation"),
    (expect(""), "pack_error", "path is required"),
    ('{"path": 1}', "pack_error", "parse json_path_match expectation"),
    (expect("$.n", "matches", 1), "pack_error", 'unsupported comparator "matches"'),
    (expect("$.", "equals", 1), "pack_error", "evaluate JSONPath expression"),
    ("$['ab']", "pack_error", "invalid quoted property"),
    # AgentClash classes every "compare JSONPath value" error pack_error, even the actual's.
    (expect("$.name", "contains", 1), "pack_error",
     "compare JSONPath value: expected value must be a string for contains comparator"),
    (expect("$.name", "greater_than", 1), "pack_error",
     "compare JSONPath value: actual value is not numeric"),
    (expect("$.n", "less_than", "11"), "pack_error",
     "compare JSONPath value: expected value is not numeric"),
])
def test_errors(expected: str, outcome_class: str, reason: str) -> None:
    """Bad expectations and paths, and values that cannot be compared, are pack errors."""
    result = run_one("json_path_match", DOC, expected)

    assert (result.state, result.outcome_class) == ("error", outcome_class)
    assert reason in result.reason


@pytest.mark.parametrize("actual", ["", "{", "1 2", '{"a":1} x', "Infinity"])
def test_actual_must_be_one_json_value(actual: str) -> None:
    """A malformed actual (or a second value) is the agent's error."""
    result = run_one("json_path_match", actual, "$")

    assert (result.outcome_class, result.reason.split(":")[0]) == (
        "evaluator_error", "parse actual JSON document")


def test_trailing_closer_is_accepted() -> None:
    """Go's decoder.More() does not see a stray closing bracket as another value."""
    assert run_one("json_path_match", '{"a": 1}]', "$.a").verdict == "pass"


def test_evidence() -> None:
    """The path, comparator, both values and existence are recorded."""
    result = run_one("json_path_match", DOC, expect("$.f", value=2.5))

    assert result.evidence == {"path": "$.f", "comparator": "equals", "expected": 2.5,
                               "actual": 2.5, "exists": True}


@given(st.text(), st.text())
def test_never_raises(actual: str, expected: str) -> None:
    """Arbitrary strings give a result, never an exception."""
    assert run_one("json_path_match", actual, expected).state in {"available", "error"}


@given(st.text(alphabet="$.[]'\"`ab01-_ \\", max_size=12))
def test_paths_never_raise_unexpectedly(path: str) -> None:
    """Arbitrary path-like strings resolve or raise PathError only."""
    with contextlib.suppress(PathError):
        lookup({"a": [{"b": 1}]}, path)


@pytest.mark.parametrize(("literal", "value"), [
    ('"plain"', "plain"), ('"\\x41\\101\\u0042\\U00000043"', "AABC"), ('"tab\\there"', "tab\there"),
    ("'a'", "a"), ("'\\''", "'"), ("'\"'", '"'), ('"\\""', '"'), ("`raw\\n`", "raw\\n"),
    ("`a\rb`", "ab"), ('"é"', "é"),
])
def test_go_unquote(literal: str, value: str) -> None:
    """Go string literals: escapes, one-character single quotes, raw backtick strings."""
    assert unquote(literal) == value


@pytest.mark.parametrize("literal", ['"', "''", "'ab'", '"\\\'"', '"a\nb"', '"\\400"',
                                     '"\\xZZ"', '"\\uD800"', "`a`b`", '"a"b"', "'a\""])
def test_go_unquote_rejects(literal: str) -> None:
    """Invalid literals are "invalid syntax"."""
    with pytest.raises(QuoteError):
        unquote(literal)


@pytest.mark.parametrize(("expected", "message"), [
    ("5", "json: cannot unmarshal number into Go value of type scoring.jsonPathExpectation"),
    ('"x"', "json: cannot unmarshal string into Go value of type scoring.jsonPathExpectation"),
    ("[1]", "json: cannot unmarshal array into Go value of type scoring.jsonPathExpectation"),
    ("true", "json: cannot unmarshal bool into Go value of type scoring.jsonPathExpectation"),
    ('{"path": 5}', "json: cannot unmarshal number into Go struct field "
                    "jsonPathExpectation.path of type string"),
    ('{"path": "$.a", "comparator": {}}', "json: cannot unmarshal object into Go struct field "
                                          "jsonPathExpectation.comparator of type string"),
])
def test_expectations_of_the_wrong_kind_name_it_as_go_does(expected: str, message: str) -> None:
    """Go's decode error names the JSON kind it found (recorded from AgentClash)."""
    result = run_one("json_path_match", DOC, expected)

    assert result.reason == f"parse json_path_match expectation: {message}"
