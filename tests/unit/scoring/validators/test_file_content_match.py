"""file_content_match (docs/scoring.md §5.16): five match modes over the captured file; lenient
config."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from unit.scoring.helpers import run_one
from unit.scoring.validators.grader_events import JSON_VALUES, captured

from evalfleet.scoring.run.records import ValidatorResult


def match(content: str, expected: str, config: Any = None) -> ValidatorResult:
    """Run file_content_match on a captured file ``content``."""
    return run_one("file_content_match", None, expected, config, target="file:out",
                   events=[captured("out", content)])


@pytest.mark.parametrize(("content", "expected", "config", "verdict", "reason"), [
    ("def fib(n):", "fib", None, "pass", ""),
    ("def fib(n):", "Fib", None, "fail", "file content does not contain expected string"),
    ("anything", "", None, "pass", ""),
    ("def fib(n):", "fib", {"mode": "exact"}, "pass", ""),
    ("def fib(n):", "def fib(n):", {"match_mode": "exact"}, "pass", ""),
    ("def fib(n):\n", "def fib(n):", {"match_mode": "exact"}, "fail",
     "file content does not match exactly"),
    ("a  b\n\tc", "a b c", {"match_mode": "exact", "ignore_whitespace": True}, "pass", ""),
    (" a b ", "a b", {"match_mode": "exact", "ignore_whitespace": True}, "fail",
     "file content does not match exactly"),
    ("a\u00a0b", "a b", {"match_mode": "exact", "ignore_whitespace": True}, "fail",
     "file content does not match exactly"),
    ("a\vb", "a b", {"match_mode": "exact", "ignore_whitespace": True}, "fail",
     "file content does not match exactly"),
    ("x =   1", "x = 1", {"ignore_whitespace": True}, "pass", ""),
    ("x =   1", "x = 1", {"match_mode": None}, "fail",
     "file content does not contain expected string"),
    ("print('secret')", "secret", {"match_mode": "not_contains"}, "fail",
     "file content contains forbidden string"),
    ("print('ok')", "secret", {"match_mode": "not_contains"}, "pass", ""),
    ("a  b", "a b", {"match_mode": "not_contains", "ignore_whitespace": True}, "fail",
     "file content contains forbidden string"),
    ("Match_Mode is folded", "folded", {"MATCH_MODE": "exact"}, "fail",
     "file content does not match exactly"),
])
def test_text_modes(content: str, expected: str, config: Any, verdict: str, reason: str) -> None:
    """contains (default; {mode: …} is ignored), exact, not_contains, ASCII whitespace collapse."""
    result = match(content, expected, config)

    assert (result.verdict, result.reason) == (verdict, reason)


@pytest.mark.parametrize(("content", "pattern", "config", "verdict"), [
    ("total: 42", r"total: \d+", {"match_mode": "regex"}, "pass"),
    ("total: ٤٢", r"\d", {"match_mode": "regex"}, "fail"),
    ("line\n", "line$", {"match_mode": "regex"}, "fail"),
    ("a  b", "a b", {"match_mode": "regex", "ignore_whitespace": True}, "fail"),
    ("a  b", "a  b", {"match_mode": "regex", "ignore_whitespace": True}, "pass"),
    ("ABC", "(?i)abc", {"match_mode": "regex"}, "pass"),
])
def test_regex_mode(content: str, pattern: str, config: Any, verdict: str) -> None:
    """regex: RE2 search of the raw expected in the raw file (no whitespace collapse)."""
    assert verdict == match(content, pattern, config).verdict


@pytest.mark.parametrize("pattern", [r"(a)\1", "(?=x)", "("])
def test_invalid_regex_is_pack_error(pattern: str) -> None:
    """A pattern RE2 rejects (backreference, lookahead, syntax) is a pack error."""
    result = match("aa", pattern, {"match_mode": "regex"})

    assert (result.state, result.outcome_class) == ("error", "pack_error")
    assert result.reason.startswith("invalid regex pattern: ")


@pytest.mark.parametrize(("content", "expected", "verdict"), [
    ('{"a": 1, "b": [1, 2]}', '{"b":[1,2.0],"a":1.0}', "pass"),
    ('{"a": 1}', '{"a": "1"}', "fail"),
    ('{"a": true}', '{"a": 1}', "fail"),
    ("[1, 2]", "[2, 1]", "fail"),
    ("null", "null", "pass"),
    ('{"a": {}}', '{"a": []}', "fail"),
    ('  {"a": 1}\n', '{"a":1}', "pass"),
    ("1e2", "100", "pass"),
])
def test_json_equal(content: str, expected: str, verdict: str) -> None:
    """json_equal: deep equality, key order irrelevant, numbers as float64, bool ≠ number."""
    result = match(content, expected, {"match_mode": "json_equal"})

    assert verdict == result.verdict
    if verdict == "fail":
        assert result.reason == "file JSON content is not structurally equal"


@pytest.mark.parametrize(("content", "expected", "reason", "outcome_class"), [
    ("not json", "{}", "parse actual as JSON: invalid character 'o' in literal null "
                       "(expecting 'u')",
     "evaluator_error"),
    ("{}", "{", "parse expected as JSON: unexpected end of JSON input", "pack_error"),
    ('{"a": 1} x', '{"a": 1}', "parse actual as JSON: invalid character 'x' after top-level "
                               "value", "evaluator_error"),
    ("NaN", "1", "parse actual as JSON: invalid character 'N' looking for beginning of value",
     "evaluator_error"),
    ("1e400", "1", "parse actual as JSON: json: cannot unmarshal number 1e400 into Go value "
                   "of type float64", "evaluator_error"),
    ("", "1", "parse actual as JSON: unexpected end of JSON input", "evaluator_error"),
])
def test_json_parse_failure_is_error(content: str, expected: str, reason: str,
                                     outcome_class: str) -> None:
    """json_equal: a side that is not one JSON value is an error (expected's is the pack's)."""
    result = match(content, expected, {"match_mode": "json_equal"})

    assert (result.state, result.outcome_class) == ("error", outcome_class)
    assert reason == result.reason


@pytest.mark.parametrize(("config", "reason"), [
    ({"match_mode": "fuzzy"}, 'unsupported match_mode "fuzzy"'),
    ({"match_mode": ""}, 'unsupported match_mode ""'),
    ({"match_mode": 3}, "invalid file_content_match config: json: cannot unmarshal number into "
                        "Go struct field fileContentMatchConfig.match_mode of type string"),
    ({"ignore_whitespace": "yes"}, "invalid file_content_match config: json: cannot unmarshal "
                                   "string into Go struct field "
                                   "fileContentMatchConfig.ignore_whitespace of type bool"),
    ([], "invalid file_content_match config: json: cannot unmarshal array into Go value of "
         "type scoring.fileContentMatchConfig"),
])
def test_config_errors(config: Any, reason: str) -> None:
    """Unknown modes and wrongly typed configs are run-time errors classed pack_error."""
    result = match("x", "x", config)

    assert (result.state, result.outcome_class, result.reason) == ("error", "pack_error", reason)


def test_missing_file_is_unavailable() -> None:
    """A capture with exists=false leaves the validator unavailable with the capture's reason."""
    result = run_one("file_content_match", None, "x", target="file:out",
                     events=[captured("out", exists=False, path="/w/out.txt")])

    assert result.state == "unavailable"
    assert result.reason == 'captured file "out" does not exist at path "/w/out.txt"'


@given(content=st.text(), expected=st.text(), config=JSON_VALUES,
       mode=st.sampled_from(["contains", "exact", "regex", "not_contains", "json_equal", "x"]))
def test_never_raises(content: str, expected: str, config: Any, mode: str) -> None:
    """Arbitrary files, expectations and configs give a result, never an exception."""
    for each in (config, {"match_mode": mode, "ignore_whitespace": True}):
        assert match(content, expected, each).state in {"available", "error"}
