"""Output a candidate controls (a test's stdout, a tool call's result, an evaluator's
stdout that echoes it, a judge's reply that quotes it) never makes scoring raise: found
by a red-team pass, each of these ended the run internal_error."""

from __future__ import annotations

import pytest

from scoring.clawdiators.script import scores_line
from scoring.run.events import Event
from scoring.run.evidence import extract_evidence
from scoring.run.test_counts import TestCounts, parse_counts

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
