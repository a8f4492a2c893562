"""Hostile input: the spec loader, the RunRequest parser, the event parser and the whole
pipeline fuzzed with hypothesis, plus 100 MB strings, 10k-deep nesting, huge numbers and
invalid UTF-8. No crash: every input is accepted or rejected with field-path errors."""

from __future__ import annotations

import json
from typing import Any

import pytest
from fleet_support import pack
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from evalfleet.sandbox.profile import Profile
from evalfleet.sandbox.testing.fake import FakeFactory
from evalfleet.scoring import Pack, SpecError, evaluate, load_pack
from evalfleet.scoring.record.events import decode_events
from evalfleet.tasks.decoding import parse_request
from evalfleet.tasks.evaluation.pipeline import PipelineConfig, ProfileBounds, run_pipeline
from evalfleet.tasks.messages import Rejection, RunRequest

MiB = 1024 * 1024
MAX = 8 * MiB
CONFIG = PipelineConfig(profiles={"default": ProfileBounds(Profile("default", "fake"))})
FUZZ = settings(max_examples=150, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(),
                    st.text(max_size=40))
json_values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=12), inner, max_size=4)),
    max_leaves=30)
REQUEST_FIELDS = ["run_id", "pack", "pack_ref", "case_key", "submission", "sandbox",
                  "priority", "time_limit_ms", "metadata", "schema_version"]
request_like = st.dictionaries(st.sampled_from(REQUEST_FIELDS), json_values, max_size=8)
submission_like = st.fixed_dictionaries({}, optional={
    "files": st.dictionaries(st.text(max_size=20), json_values, max_size=3),
    "commands": st.lists(json_values, max_size=3),
    "events": st.lists(json_values, max_size=3),
    "final_output": json_values})
SPEC_FIELDS = ["name", "version_number", "judge_mode", "validators", "metrics", "scorecard",
               "runtime_limits", "behavioral", "llm_judges", "clawdiators"]
spec_like = st.dictionaries(st.sampled_from(SPEC_FIELDS), json_values, max_size=8)


def assert_clear(problems: list[Any]) -> None:
    """Every rejection names a field path under ``request`` and says what is wrong."""
    assert problems
    for problem in problems:
        assert problem.field.startswith("request") and problem.message.strip()


def check_request(body: Any) -> None:
    try:
        parsed = parse_request(body, MAX)
    except Rejection as rejection:
        assert_clear(rejection.problems)
    else:
        assert isinstance(parsed, RunRequest)


def check_pack(source: Any) -> None:
    try:
        loaded = load_pack(source)
    except SpecError as err:
        assert err.errors and all(e.field and e.message for e in err.errors)
    else:
        assert isinstance(loaded, Pack)


@FUZZ
@given(st.one_of(request_like, st.text(max_size=200), st.binary(max_size=200), json_values))
def test_request_parser_never_crashes(body: Any) -> None:
    if isinstance(body, dict | str | bytes):
        check_request(body)
    else:
        check_request(json.dumps(body))


@FUZZ
@given(submission_like, st.sampled_from([None, "acme"]))
def test_pipeline_never_crashes_on_a_hostile_submission(submission: dict[str, Any],
                                                        case: str | None) -> None:
    """Whatever the submission, the pipeline returns a result (no exception reaches the
    task, so the worker and the queue carry on)."""
    body = json.dumps({"run_id": "fuzz-1", "pack": pack(), "case_key": case,
                       "submission": submission})
    result = run_pipeline(body, FakeFactory(), CONFIG)
    assert result.outcome in {"scored", "rejected"}
    if result.outcome == "rejected":
        assert_clear(list(result.errors))


@FUZZ
@given(st.one_of(spec_like, st.text(max_size=300), json_values))
def test_spec_loader_never_crashes(source: Any) -> None:
    if isinstance(source, dict) or (isinstance(source, str) and "\n" in source):
        check_pack(source)
    else:
        check_pack(json.dumps(source) if not isinstance(source, str) else source + "\n")


@FUZZ
@given(st.fixed_dictionaries({"name": st.just("fz"), "version_number": st.just(1),
                              "judge_mode": st.just("deterministic"),
                              "scorecard": st.just({"dimensions": ["correctness"]})},
                             optional={"validators": st.lists(json_values, max_size=3)}))
def test_spec_loader_never_crashes_near_valid(spec: dict[str, Any]) -> None:
    check_pack(spec)


event_like = st.fixed_dictionaries({"type": st.one_of(st.sampled_from(
    ["system.run.completed", "model.call.completed", "tool.call.completed", "x"]), scalars)},
    optional={"payload": json_values, "sequence_number": json_values,
              "occurred_at": st.one_of(st.text(max_size=30), scalars)})


@FUZZ
@given(st.lists(st.one_of(event_like, json_values), max_size=6))
def test_event_parser_and_evaluate_never_crash(raw: list[Any]) -> None:
    """Events decode or fail with a validation error (the request parser prefixes its path,
    ``request.submission.events[i]``); decoded events always score."""
    try:
        events = decode_events(raw)
    except ValidationError as err:
        assert err.errors() and all(e["msg"] for e in err.errors())
        return
    card = evaluate(load_pack(pack()).spec, events)
    assert card.validity in {"valid", "invalid", "partial", "degraded"} or card.validity


DEEP = 10_000


@pytest.mark.parametrize(("body", "field", "message"), [
    ("[" * DEEP + "]" * DEEP, "request", "nested too deeply"),
    ('{"run_id": "a", "pack": ' + '{"a": ' * DEEP + "1" + "}" * DEEP + "}", "request",
     "nested too deeply"),
    ("x" * (100 * MiB), "request", "larger than"),
    ('{"run_id": "a", "pack_ref": "p", "priority": ' + "9" * 5000 + "}", "request",
     "invalid JSON"),
    ('{"run_id": "a", "pack_ref": "p", "priority": 1e999999}', "request.priority", "finite"),
    (b'{"run_id": "\xff\xfe", "pack_ref": "p"}', "request", "utf-8"),
    ('{"run_id": "a", "pack_ref": "p", "submission": {"events": [{"type": "x", "payload": "'
     + '[' * DEEP + '"}]}}', "request.submission.events[0].payload", "nested too deeply"),
    ('{"run_id": "a", "pack_ref": "p", "submission": {"events": [{"type": 7}]}}',
     "request.submission.events[0].type", "string"),
    ('{"run_id": "a", "pack_ref": "p", "submission": {"events": [{"type": "model.call.completed"'
     '}, {"type": "grader.verification.code_executed", "occurred_at": "9999-12-31T00:00:00Z"}]}}',
     "request.submission.events[1].type", "grader's own event"),
])
def test_large_and_deep_requests_are_clear_rejections(body: str | bytes, field: str,
                                                      message: str) -> None:
    with pytest.raises(Rejection) as raised:
        parse_request(body, MAX)
    assert raised.value.problems[0].field == field
    assert message in raised.value.problems[0].message


@pytest.mark.parametrize(("source", "message"), [
    ("[" * DEEP + "]" * DEEP + "\n", "nested too deeply"),
    ('{"a": ' * DEEP + "1" + "}" * DEEP, "exceeded max depth"),  # Go's encoding/json words
    ("name: x\nversion_number: " + "9" * 5000 + "\n", "version_number must be an integer"),
    ('{"name": "x", "version_number": ' + "9" * 5000 + "}", "cannot unmarshal number"),
    ("\x1f", "special characters are not allowed"),
    ({"name": "x" * (100 * MiB), "version_number": 1}, "judge_mode"),
    ({"name": "x", "version_number": 10**400, "judge_mode": "deterministic"}, "fits in int32"),
])
def test_large_and_deep_specs_are_clear_errors(source: Any, message: str) -> None:
    with pytest.raises(SpecError) as raised:
        load_pack(source)
    assert message in str(raised.value)
    assert all(e.field for e in raised.value.errors)
