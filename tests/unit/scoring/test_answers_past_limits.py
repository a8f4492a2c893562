"""A candidate's answer or trajectory past what a check can read is the candidate's loss,
never no contest and never a crash (found by a red-team pass): an answer nested past
Python's recursion limit, one past fuzzy_match's size or math_equivalence's depth, and
event times at the very edge of the calendar."""

from __future__ import annotations

from typing import Any

import pytest
from clawdiators.layer_helpers import layer_spec, run

from evalfleet.scoring import evaluate, load_spec
from evalfleet.scoring.validators.base import NESTED_TOO_DEEPLY


def spec(kind: str, expected: str, **config: Any) -> Any:
    return load_spec({"name": "limits", "version_number": 1, "judge_mode": "deterministic",
                      "validators": [{"key": "v", "type": kind, "target": "final_output",
                                      "expected_from": expected, "config": config}],
                      "scorecard": {"dimensions": ["correctness"]}})


def answered(text: str) -> list[dict[str, Any]]:
    return [{"type": "system.run.completed", "sequence_number": 1,
             "occurred_at": "2026-01-01T00:00:00Z", "payload": {"final_output": text}}]


SCHEMA = '{"type": "array"}'


@pytest.mark.parametrize(("kind", "expected", "answer"), [
    ("json_schema", f"literal:{SCHEMA}", "[" * 800 + "]" * 800),
    ("fuzzy_match", "literal:Canberra", "Sydney " * 20_000),
    ("math_equivalence", "literal:x+1", "(" * 600 + "x+2" + ")" * 600),
])
def test_an_answer_past_a_checks_limits_is_a_loss(kind: str, expected: str,
                                                  answer: str) -> None:
    """The validator errs (AgentClash's reasons), and the run is a forfeit: 0, a loss."""
    card = evaluate(spec(kind, expected), answered(answer))
    assert card.validator_details[0].state == "error"
    assert (card.score, card.result) == (0, "loss"), card.validity_reason


def test_an_answer_nested_too_deeply_says_so() -> None:
    card = evaluate(spec("json_schema", f"literal:{SCHEMA}"), answered("[" * 800 + "]" * 800))
    assert card.validator_details[0].reason == NESTED_TOO_DEEPLY


RECURSIVE = '{"items": {"$ref": "#"}}'


def test_an_answer_too_deep_for_a_recursive_schema_is_a_loss() -> None:
    """300 levels under a schema that refers to itself ran validation out of Python's
    stack, which was booked as the pack's error (no contest: found by a red-team pass).
    Go's validator reads it; here it is the answer's doing, a forfeit. 200 still pass."""
    card = evaluate(spec("json_schema", f"literal:{RECURSIVE}"), answered("[" * 300 + "]" * 300))
    assert card.validator_details[0].reason == NESTED_TOO_DEEPLY
    assert (card.score, card.result) == (0, "loss"), card.validity_reason
    card = evaluate(spec("json_schema", f"literal:{RECURSIVE}"), answered("[" * 200 + "]" * 200))
    assert card.validator_details[0].verdict == "pass"


def test_a_schema_recursing_by_itself_is_still_the_packs_error() -> None:
    card = evaluate(spec("json_schema", 'literal:{"$ref": "#"}'), answered("[[]]"))
    assert card.validator_details[0].reason.startswith("resolve JSON schema: ")
    assert card.result is None


def test_a_postcondition_target_that_is_not_json_is_a_loss() -> None:
    """``equals`` with a JSON value on a captured file that is not JSON errs (AgentClash's
    reason); it was not counted as the candidate's doing, and the run was no contest."""
    postcondition = load_spec({
        "name": "limits", "version_number": 1, "judge_mode": "deterministic",
        "validators": [{"key": "v", "type": "postcondition", "target": "file:out",
                        "config": {"condition": "equals", "value": {"ok": True}}}],
        "post_execution_checks": [{"key": "out", "type": "file_capture",
                                   "path": "/workspace/out.json"}],
        "scorecard": {"dimensions": ["correctness"]}})
    capture = {"type": "grader.verification.file_captured", "sequence_number": 2,
               "occurred_at": "2026-01-01T00:00:01Z",
               "payload": {"key": "out", "path": "/workspace/out.json", "exists": True,
                           "content": '{"ok": tru'}}
    card = evaluate(postcondition, [*answered("done"), capture])
    assert card.validator_details[0].reason.startswith("parse postcondition target as JSON")
    assert (card.score, card.result) == (0, "loss"), card.validity_reason


@pytest.mark.timeout(60)
@pytest.mark.parametrize("answer", [
    "\\boxed{" * 150_000 + "1" + "}" * 150_000,  # rewritten once per command: hours
    "\\sqrt{1}+" * 200_000 + "1",
    "x^1e99999*" * 100_000 + "1",  # exact powers of ten: 5 ms and 41 KB each
])
def test_a_math_answer_past_its_size_is_a_loss_at_once(answer: str) -> None:
    """A math_equivalence answer longer than 10,000 characters is not read (evalfleet's
    limit: a red-team pass held a worker for hours with 2 MiB of LaTeX); a forfeit."""
    card = evaluate(spec("math_equivalence", "literal:1"), answered(answer))
    assert card.validator_details[0].reason.startswith(
        "normalize actual math expression: expression is too large ("), card
    assert (card.score, card.result) == (0, "loss"), card.validity_reason


def test_a_math_answer_within_its_size_and_the_packs_own_long_value_are_read() -> None:
    card = evaluate(spec("math_equivalence", "literal:1e9999"), answered("1" + "0" * 9_999))
    assert card.validator_details[0].verdict == "pass", card.validator_details[0].reason
    card = evaluate(spec("math_equivalence", "literal:1" + "0" * 20_000), answered("1e20000"))
    assert card.validator_details[0].verdict == "pass", card.validator_details[0].reason


def test_the_packs_own_value_past_the_limit_is_still_no_contest() -> None:
    """The same reason with the pack's expected value past the limit is the pack's doing."""
    card = evaluate(spec("fuzzy_match", "literal:" + "x" * 100_001), answered("short"))
    assert card.validator_details[0].state == "error"
    assert card.result is None


@pytest.mark.parametrize("where", ["start", "end"])
def test_event_times_at_the_edge_of_the_calendar_score(where: str) -> None:
    """A run started in year 1 or ended in 9999 (the window's ± 5 s overflowed Python's
    dates): its trajectory is not verified, and the run is scored."""
    events = run(calls=2, tokens=(100, 100))
    if where == "start":
        events[0]["occurred_at"] = "0001-01-01T00:00:00+00:00"
    else:
        events[-1]["occurred_at"] = "9999-12-31T23:59:59+00:00"
    spec = layer_spec([{"key": "tokens", "source": "token_efficiency",
                        "efficiency": {"budget": 1000}}])
    card = evaluate(spec, events)
    assert card.dimensions["tokens"].score == 0.0
    assert "outside the run's time window" in card.dimensions["tokens"].reason


def test_a_latency_past_the_calendar_leaves_no_terminal_time() -> None:
    events = run(seconds=1.0)
    events[0]["occurred_at"] = "0001-01-02T00:00:00+00:00"
    events[-1]["payload"]["latency_ms"] = -10**12
    card = evaluate(spec("contains", "literal:42"), events)
    assert card.score is not None
