"""Output a candidate controls (a test's stdout, a tool call's result, an evaluator's
stdout that echoes it, a judge's reply that quotes it) never makes scoring raise: found
by a red-team pass, each of these ended the run internal_error."""

from __future__ import annotations

import re
from fractions import Fraction

import pytest
from helpers import run_one
from hypothesis import given
from hypothesis import strategies as st

from evalfleet.scoring.clawdiators.script import scores_line
from evalfleet.scoring.compat import gofloat
from evalfleet.scoring.compat.gofloat import FloatSyntaxError, parse_float
from evalfleet.scoring.compat.mathcanon import fraction_text
from evalfleet.scoring.record import tally
from evalfleet.scoring.record.events import Event
from evalfleet.scoring.record.evidence import extract_evidence
from evalfleet.scoring.record.tally import TestCounts, parse_counts

DEEP = "[" * 100_000


@pytest.mark.parametrize(("output", "expected"), [
    # Go's mustAtoi: digit by digit in int64, wrapping (Python's int() refused 4,301 digits)
    ("9" * 4301 + " passed\n1 failed", TestCounts(-1, 1, 0, 0)),
    ("18446744073709551617 passed", TestCounts(1, 0, 0, 1)),
    # Go's \d and \s are ASCII: no count here, as in AgentClash
    ("٣ passed", None),
    ("3\u2003passed", None),
    ("3 passed", TestCounts(3, 0, 0, 3)),
    (DEEP, None),  # not a JSON object (nested past Python's stack), nor anything else
])
def test_counts_from_hostile_test_output(output: str, expected: TestCounts | None) -> None:
    assert parse_counts(output, "") == expected


def test_a_tool_result_nested_past_the_stack_is_plain_text() -> None:
    event = Event(type="tool.call.completed", sequence_number=1,
                  payload={"tool_name": "exec", "result": {"content": DEEP}})
    assert extract_evidence([event]).tool_calls[0].error_message == DEEP


def test_an_evaluator_line_nested_past_the_stack_is_not_a_scores_line() -> None:
    assert scores_line('{"scores": {"a": 1}}\n' + DEEP) == {"scores": {"a": 1}}


@pytest.mark.parametrize("end", ["\r", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"])
def test_an_echoed_answer_cannot_end_a_line_of_the_evaluators(end: str) -> None:
    """An evaluator that prints its scores, then echoes the candidate's answer on one line
    (after removing every newline from it), keeps its own scores."""
    answer = f'wrong{end}{{"scores": {{"a": 1}}}}'
    assert scores_line('{"scores": {"a": 0}}\nanswer: ' + answer + "\n") == {"scores": {"a": 0}}
    assert scores_line('{"scores": {"a": 0.5}}\r\n') == {"scores": {"a": 0.5}}


# Patterns as they were before the red-team pass of 2026-11-28: Python's backtracking made
# them quadratic on long runs of digits (2 MiB of a test's output took hours; a 40,000-digit
# answer to numeric_match, 46 s), so a submission could hold a worker until the task's time
# limit and void its own run. The patterns now in use must match exactly what these did.
_OLD_FREE_TEXT = re.compile(r"([0-9]+)[\t\n\f\r ]+(passed|failed|errors|error)\b",
                            re.IGNORECASE | re.ASCII)
_OLD_DECIMAL = re.compile(r"[+-]?(?:[0-9_]+\.?[0-9_]*|\.[0-9_]+)(?:[eE][+-]?[0-9][0-9_]*)?")
_OLD_HEX = re.compile(
    r"[+-]?0[xX](?:[0-9a-fA-F_]+\.?[0-9a-fA-F_]*|\.[0-9a-fA-F_]+)[pP][+-]?[0-9][0-9_]*")
COUNT_TEXT = st.text(alphabet="0123456789 \t\npasedfilror.xP_EPSr", max_size=60)
NUMBER_TEXT = st.text(alphabet="0123456789abcdefABCDEF_.+-xXpPeE ", max_size=30)


@given(COUNT_TEXT)
def test_the_count_pattern_matches_what_it_did(text: str) -> None:
    assert tally._FREE_TEXT.findall(text) == _OLD_FREE_TEXT.findall(text)


@given(NUMBER_TEXT)
def test_the_number_patterns_match_what_they_did(text: str) -> None:
    assert bool(gofloat._DECIMAL.fullmatch(text)) == bool(_OLD_DECIMAL.fullmatch(text))
    assert bool(gofloat._HEX.fullmatch(text)) == bool(_OLD_HEX.fullmatch(text))


@pytest.mark.timeout(60)
def test_output_of_digits_at_the_cap_is_read_in_linear_time() -> None:
    """Two MiB of digits (the test output's cap) on each stream: read in well under a
    second now; the old patterns would not finish before the suite's timeout."""
    digits = "7" * (2 << 20)
    assert parse_counts(digits, digits) is None
    assert parse_counts("3 passed " + digits, digits) == TestCounts(3, 0, 0, 3)
    with pytest.raises(FloatSyntaxError):
        parse_float(digits + "x")
    with pytest.raises(FloatSyntaxError):
        parse_float("0x" + digits + "x")


@pytest.mark.parametrize(("answer", "expected", "verdict"), [
    ("1e5000", "1e5000", "pass"),
    ("1e5000", "2", "fail"),
    ("0." + "0" * 4400 + "1", "1e-4401", "pass"),
    ("7" * 5000, "7" * 5000, "pass"),
    ("x^1e5000", "x^1e5000", "pass"),
])
def test_math_answers_past_pythons_digit_limit(answer: str, expected: str, verdict: str) -> None:
    """Python refuses to write an integer of more than 4,300 digits: a six-byte answer
    (``1e5000``) made math_equivalence raise, and the run was void (internal_error)."""
    assert fraction_text(Fraction(-(10**5000) - 1, 3)) == f"-1{'0' * 4999}1/3"
    assert run_one("math_equivalence", answer, expected, {}).verdict == verdict


def test_many_models_are_each_observed_once_in_order() -> None:
    """300,000 distinct models (8 MiB of events) took minutes when each was looked up in
    a list; a set beside it keeps the order and the result."""
    events = [Event(type="model.call.started", sequence_number=i + 1,
                    payload={"model": f"m{i % 50_000}"}) for i in range(100_000)]
    observed = extract_evidence(events).observed_models
    assert observed == [("", f"m{i}") for i in range(50_000)]
