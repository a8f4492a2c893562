"""tool_call_assertion (docs/scoring.md §5.20): presence, counts, argument fragments and order over
the trace."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from unit.scoring.helpers import run_one
from unit.scoring.validators.grader_events import JSON_VALUES, spec_body, tool_call

from evalfleet.scoring.errors import FieldError
from evalfleet.scoring.run.records import ValidatorResult
from evalfleet.scoring.spec.models import EvaluationSpec
from evalfleet.scoring.spec.rules import validate_spec
from evalfleet.scoring.validators import tool_call_assertion
from evalfleet.scoring.validators.tool_call_assertion import contains

PATH = "evaluation_spec.validators[0].config"
TRACE = [
    tool_call("search", {"query": "x"}),
    tool_call("read_file", {"path": "a.txt"}),
    tool_call("read_file", {"path": "b.txt"}),
    tool_call("submit", {"answer": "done"}),
]


def assertion(config: Any, events: list[dict[str, Any]] | None = None) -> ValidatorResult:
    """Run tool_call_assertion over ``events`` (default: search, read×2, submit)."""
    return run_one("tool_call_assertion", None, config=config, target="tool_calls",
                   events=TRACE if events is None else events)


@pytest.mark.parametrize(("config", "verdict", "reason"), [
    ({"tool_name": "submit"}, "pass", ""),
    ({"tool_name": "exec"}, "fail", "expected matching tool call was not observed"),
    ({"tool_name": "exec", "must_call": False}, "pass", ""),
    ({"tool_name": "search", "must_call": False}, "fail",
     "forbidden matching tool call was observed"),
    ({"tool_name": "read_file", "min_count": 2, "max_count": 2}, "pass", ""),
    ({"tool_name": "read_file", "min_count": 3}, "fail", "matched tool call count 2 < min_count 3"),
    ({"tool_name": "read_file", "max_count": 1}, "fail", "matched tool call count 2 > max_count 1"),
    ({"tool_name": "submit", "count": 2}, "fail", "matched tool call count 1 != expected 2"),
    ({"tool_name": "exec", "count": 0}, "pass", ""),
    ({"tool_name": "exec", "min_count": 0}, "pass", ""),
    ({"tool_name": "search", "count": 0}, "fail", "matched tool call count 1 != expected 0"),
    ({"tool_name": "  submit  "}, "pass", ""),
    ({"count": 4}, "pass", ""),
    ({"must_call": True}, "pass", ""),
    ({"tool_name": "exec", "must_call": True, "min_count": 1}, "fail",
     "expected matching tool call was not observed; matched tool call count 0 < min_count 1"),
    ({"ordered_tools": ["search", "read_file", "submit"]}, "pass", ""),
    ({"ordered_tools": ["search", "submit"], "order_mode": "subsequence"}, "pass", ""),
    ({"ordered_tools": ["submit", "search"]}, "fail",
     "observed tool order [search read_file read_file submit] does not contain expected "
     "subsequence [submit search]"),
    ({"ordered_tools": ["search", "read_file", "submit"], "order_mode": "exact"}, "fail",
     "observed tool order [search read_file read_file submit] does not exactly match expected "
     "order [search read_file submit]"),
    ({"ordered_tools": ["search", "read_file", "read_file", "submit"], "order_mode": " exact "},
     "pass", ""),
    ({"tool_name": "exec", "ordered_tools": ["submit", "search"]}, "fail",
     "expected matching tool call was not observed; observed tool order [search read_file "
     "read_file submit] does not contain expected subsequence [submit search]"),
])
def test_assertions(config: dict[str, Any], verdict: str, reason: str) -> None:
    """Presence (explicit or implicit), counts and order; every failing check is reported."""
    result = assertion(config)

    assert (result.state, result.verdict, result.reason) == ("available", verdict, reason)
    assert result.normalized_score == (1.0 if verdict == "pass" else 0.0)


@pytest.mark.parametrize(("fragment", "arguments", "verdict"), [
    ({"answer": {"value": "42"}}, {"answer": {"value": "42", "secret": "x"}}, "pass"),
    ({"answer": "42"}, {"answer": 42}, "fail"),
    ({"n": 1}, {"n": 1.0}, "pass"),
    ({"n": 1}, {"n": True}, "fail"),
    ({"flag": True}, {"flag": 1}, "fail"),
    ({"tags": ["urgent"], "steps": [{"status": "done"}]},
     {"tags": ["info", "urgent"], "steps": [{"status": "queued"}, {"status": "done", "id": 1}]},
     "pass"),
    ({"steps": ["approve", "approve"]}, {"steps": ["approve"]}, "fail"),
    ({"steps": ["b", "a"]}, {"steps": ["a", "b", "c"]}, "pass"),
    ({"missing": None}, {"other": 1}, "fail"),
    ({"nullable": None}, {"nullable": None}, "pass"),
    ({}, {"anything": 1}, "pass"),
    ({"a": {"b": [1, {"c": 2}]}}, {"a": {"b": [{"c": 2.0, "d": 3}, 1, 5]}}, "pass"),
    ({"a": [1]}, {"a": 1}, "fail"),
])
def test_argument_fragment(fragment: dict[str, Any], arguments: dict[str, Any],
                           verdict: str) -> None:
    """Objects recursive, arrays order-free and consuming, scalars equal as float64 (bool ≠ 1)."""
    result = assertion({"tool_name": "submit", "arguments_contain": fragment},
                       [tool_call("submit", arguments)])

    assert result.verdict == verdict


def test_failed_calls_are_ignored() -> None:
    """Failed calls never match and never enter the observed order."""
    events = [tool_call("search", {"q": 1}, failed=True), tool_call("search", {"q": 1}),
              tool_call("submit", failed=True)]

    presence = assertion({"tool_name": "submit", "must_call": True}, events)
    zero = assertion({"tool_name": "submit", "count": 0}, events)
    order = assertion({"ordered_tools": ["search"], "order_mode": "exact"}, events)

    assert (presence.verdict, zero.verdict, order.verdict) == ("fail", "pass", "pass")
    assert (presence.evidence["observed_count"], presence.evidence["failed_count"]) == (1, 2)


def test_order_follows_sequence_numbers() -> None:
    """The trace is in event order: sequence numbers first, whatever the timestamps."""
    events = [tool_call("submit", sequence=2), tool_call("search", sequence=1)]

    assert assertion({"ordered_tools": ["search", "submit"], "order_mode": "exact"},
                     events).verdict == "pass"


def test_evidence_never_holds_arguments() -> None:
    """Evidence has counts, indices and names only; raw arguments never leak."""
    events = [tool_call("search", {"q": "x"}),
              tool_call("submit", {"answer": {"value": "42", "secret": "SHOULD_NOT_LEAK"}})]
    result = assertion({"tool_name": "submit", "arguments_contain": {"answer": {"value": "42"}}},
                       events)

    assert "SHOULD_NOT_LEAK" not in json.dumps(result.model_dump())
    assert result.actual_value is None
    assert {k: result.evidence[k] for k in ("matched_count", "matched_indices",
                                            "observed_tool_names", "arguments_contain_set")} == {
        "matched_count": 1, "matched_indices": [1], "observed_tool_names": ["search", "submit"],
        "arguments_contain_set": True}


@pytest.mark.parametrize(("config", "errors"), [
    ({"tool_name": "submit"}, []),
    ({"tool_name": "submit", "min_count": 2, "max_count": 1},
     [FieldError(f"{PATH}.min_count", "must be less than or equal to max_count")]),
    ({"tool_name": "submit", "count": 1, "min_count": 0},
     [FieldError(f"{PATH}.count", "cannot be combined with min_count or max_count")]),
    ({"count": -1}, [FieldError(f"{PATH}.count", "must be greater than or equal to 0")]),
    ({"tool_name": "submit", "must_call": True, "count": 0},
     [FieldError(f"{PATH}.must_call", "cannot be true when count is 0")]),
    ({"tool_name": "submit", "must_call": True, "max_count": 0},
     [FieldError(f"{PATH}.must_call", "cannot be true when max_count is 0")]),
    ({"tool_name": "submit", "must_call": False, "count": 1},
     [FieldError(f"{PATH}.must_call", "cannot be false when count is greater than 0")]),
    ({"tool_name": "submit", "must_call": False, "min_count": 1},
     [FieldError(f"{PATH}.must_call", "cannot be false when min_count is greater than 0")]),
    ({"tool_name": "submit", "arguments_contain": ["answer"]},
     [FieldError(f"{PATH}.arguments_contain", "must be a JSON object")]),
    ({"arguments_contain": None},
     [FieldError(f"{PATH}.arguments_contain", "must be a JSON object")]),
    ({"ordered_tools": ["search"], "order_mode": "before"},
     [FieldError(f"{PATH}.order_mode", 'must be "subsequence" or "exact"')]),
    ({"tool_name": "x", "order_mode": "exact"},
     [FieldError(f"{PATH}.ordered_tools", "is required when order_mode is set")]),
    ({"ordered_tools": ["search", " ", None]},
     [FieldError(f"{PATH}.ordered_tools[1]", "must not be empty"),
      FieldError(f"{PATH}.ordered_tools[2]", "must not be empty")]),
    ({}, [FieldError(PATH, "must declare at least one tool call assertion")]),
    ({"tool_name": "  ", "ordered_tools": [], "must_call": None},
     [FieldError(PATH, "must declare at least one tool call assertion")]),
])
def test_config_rules(config: dict[str, Any], errors: list[FieldError]) -> None:
    """Load-time rules, with AgentClash's field paths and messages."""
    model, problem = tool_call_assertion.KIND.decode_config(config)

    assert problem is None
    assert tool_call_assertion.KIND.config_rules is not None
    assert tool_call_assertion.KIND.config_rules(model, PATH) == errors


ABSENT = object()


@pytest.mark.parametrize(("config", "needle"), [
    (ABSENT, "tool_call_assertion config is required"),
    (None, "must declare at least one tool call assertion"),  # null decodes as {}
    ({"tool_name": "submit", "min_count": 2, "max_count": 1},
     "min_count must be less than or equal to max_count"),
    ({"tool_name": "submit", "arguments_contain": ["answer"]},
     "arguments_contain must be a JSON object"),
    ({"ordered_tools": ["search"], "order_mode": "before"},
     'order_mode must be "subsequence" or "exact"'),
    ({"tool_name": "submit", "must_call": True, "count": 0},
     "must_call cannot be true when count is 0"),
    ({"tool_name": "submit", "must_call": False, "count": 1},
     "must_call cannot be false when count is greater than 0"),
    ({"tool_name": "submit", "must_call": True, "max_count": 0},
     "must_call cannot be true when max_count is 0"),
    ({"tool_name": "submit", "must_call": False, "min_count": 1},
     "must_call cannot be false when min_count is greater than 0"),
    ({"tool_name": "submit", "typo": True}, "unknown field"),
    ({"tool_name": "submit", "count": 1.0}, "invalid JSON"),
])
def test_validate_spec_messages(config: Any, needle: str) -> None:
    """Through validate_spec: the joined error text contains AgentClash's message catalogue."""
    declaration = {"key": "v", "type": "tool_call_assertion", "target": "tool_calls"}
    if config is not ABSENT:
        declaration["config"] = config
    spec = EvaluationSpec.model_validate(spec_body(declaration))

    assert needle in "; ".join(str(error) for error in validate_spec(spec))


@pytest.mark.parametrize(("config", "reason"), [
    (None, "parse tool_call_assertion config: tool_call_assertion config is required"),
    ({}, "invalid tool_call_assertion config: config must declare at least one tool call "
         "assertion"),
    ({"tool_name": "s", "min_count": 2, "max_count": 1},
     "invalid tool_call_assertion config: config.min_count must be less than or equal to "
     "max_count"),
    ({"tool_name": "s", "bogus": 1},
     'parse tool_call_assertion config: json: unknown field "bogus"'),
])
def test_bad_config_at_run_time(config: Any, reason: str) -> None:
    """An unvalidated bad config is an error result classed pack_error, not an exception."""
    result = assertion(config)

    assert (result.state, result.outcome_class, result.reason) == ("error", "pack_error", reason)


def test_contains_consumes_array_elements() -> None:
    """Array containment is greedy and consuming: each actual element serves one expected."""
    assert contains([1, 1, 2], [1, 1]) and not contains([1, 2], [1, 1])


@given(config=st.dictionaries(st.sampled_from(
    ["tool_name", "must_call", "count", "min_count", "max_count", "arguments_contain",
     "ordered_tools", "order_mode"]), JSON_VALUES, max_size=5),
    calls=st.lists(st.tuples(st.text(min_size=1, max_size=8), JSON_VALUES, st.booleans()),
                   max_size=5))
def test_never_raises(config: dict[str, Any], calls: list[tuple[str, Any, bool]]) -> None:
    """Arbitrary configs and traces give a result, never an exception."""
    events = [tool_call(name, args, failed=failed) for name, args, failed in calls]

    assert assertion(config, events).state in {"available", "error"}


@pytest.mark.parametrize("arguments", ['{"n": NaN}', '{"n": Infinity}', '{"n": 1e400}',
                                       '{"n": 1}'])
def test_string_arguments_are_a_json_string(arguments: str) -> None:
    """Arguments given as a string stay a JSON string (Go re-encodes the payload value), so
    no object fragment matches, even when the text is JSON."""
    events = [tool_call("submit", arguments)]

    assert assertion({"tool_name": "submit"}, events).verdict == "pass"
    assert assertion({"tool_name": "submit", "arguments_contain": {}}, events).verdict == "fail"
    assert assertion({"arguments_contain": {"n": 1}}, events).verdict == "fail"


def test_arguments_go_cannot_encode_are_an_empty_object() -> None:
    """A non-finite number (possible only in a Python payload) encodes as Go's failed
    marshal does: the arguments become ``{}``, not a crash."""
    events = [tool_call("submit", {"n": float("nan")})]

    assert assertion({"tool_name": "submit", "arguments_contain": {}}, events).verdict == "pass"
    assert assertion({"arguments_contain": {"n": 1}}, events).verdict == "fail"
