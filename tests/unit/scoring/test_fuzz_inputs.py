"""No input crashes scoring: hypothesis throws non-finite, huge and out-of-range numbers at
``load_spec``, ``load_pack`` and ``evaluate``. Each either works or raises ``SpecError``
(``InputError`` for a run's inputs) naming a field; nothing else escapes, and a scorecard
never carries a non-finite number."""

from __future__ import annotations

import copy
import json
import math
from typing import Any

from helpers import T0
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalfleet import scoring
from evalfleet.scoring import InputError, Scorecard, SpecError

BASE: dict[str, Any] = {
    "name": "fuzz", "version_number": 1, "judge_mode": "deterministic",
    "validators": [
        {"key": "exact", "type": "exact_match", "target": "final_output",
         "expected_from": "literal:42"},
        {"key": "num", "type": "numeric_match", "target": "final_output",
         "expected_from": "literal:42", "config": {"tolerance": 0.5}},
        {"key": "fuzzy", "type": "fuzzy_match", "target": "final_output",
         "expected_from": "literal:42", "config": {"threshold": 0.8}}],
    "metrics": [{"key": "lat", "type": "numeric", "collector": "run_total_latency_ms"},
                {"key": "tok", "type": "numeric", "collector": "run_total_tokens"}],
    "runtime_limits": {"max_total_tokens": 100000},
    "scorecard": {
        "strategy": "weighted", "pass_threshold": 0.5,
        "dimensions": [
            {"key": "correctness", "source": "validators", "weight": 2},
            {"key": "speed", "source": "latency", "better_direction": "lower", "weight": 1,
             "normalization": {"target": 100, "max": 1000}},
            {"key": "tokens", "source": "metric", "metric": "tok", "better_direction": "lower",
             "weight": 1, "normalization": {"target": 10, "max": 1000}},
            {"key": "pref", "source": "human_preference", "weight": 1}]}}

NUMBERS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True), st.integers(-(10**30), 10**30),
    st.sampled_from([0, -1, 1, 0.5, 1e308, -1e308, 5e-324, 2**63, -(2**63) - 1]))
PATHS = [
    ("scorecard", "pass_threshold"), ("scorecard", "dimensions", 0, "weight"),
    ("scorecard", "dimensions", 1, "weight"), ("scorecard", "dimensions", 1, "normalization",
                                               "target"),
    ("scorecard", "dimensions", 1, "normalization", "max"),
    ("scorecard", "dimensions", 2, "normalization", "max"), ("scorecard", "dimensions", 3,
                                                             "weight"),
    ("validators", 1, "config", "tolerance"), ("validators", 2, "config", "threshold"),
    ("runtime_limits", "max_total_tokens"), ("version_number",)]


def _set(document: dict[str, Any], path: tuple[Any, ...], value: Any) -> None:
    node: Any = document
    for step in path[:-1]:
        node = node[step]
    node[path[-1]] = value


def _go_json_text(document: Any) -> str:
    """JSON text with Python's NaN/Infinity tokens left in (they are not JSON)."""
    return json.dumps(document, allow_nan=True)


def _assert_finite(card: Scorecard) -> None:
    numbers = [card.overall_score, *(d.score for d in card.dimensions.values()),
               *(v.normalized_score for v in card.validator_details)]
    assert all(n is None or math.isfinite(n) for n in numbers), numbers
    assert card.score is None or 0 <= card.score <= 1000


def _assert_fields(err: SpecError) -> None:
    assert err.errors and all(e.field and e.message for e in err.errors), err.errors


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(changes=st.lists(st.tuples(st.sampled_from(PATHS), NUMBERS), min_size=1, max_size=4),
       as_text=st.booleans())
def test_load_spec_rejects_bad_numbers_with_a_field(changes: list[tuple[tuple[Any, ...], Any]],
                                                    as_text: bool) -> None:
    """Any number in any numeric field: the spec loads, or each problem names its field."""
    document = copy.deepcopy(BASE)
    for path, value in changes:
        _set(document, path, value)
    try:
        spec = scoring.load_spec(_go_json_text(document) if as_text else document)
    except SpecError as err:
        _assert_fields(err)
        return
    card = scoring.evaluate(spec, [{"type": "system.run.completed", "occurred_at": T0,
                                    "payload": {"final_output": "42"}}])
    _assert_finite(card)


YAML_NUMBERS = st.sampled_from([".inf", "-.inf", ".nan", ".NaN", "+.Inf", "1e400", "-1e400",
                                "0x7fffffffffffffffff", "1_000", "0o17", "1e-400", "~"])


@settings(max_examples=200, deadline=None)
@given(field=st.sampled_from(["pass_threshold: {v}", "dimensions: [{{key: c, source: "
                              "validators, weight: {v}}}]"]), value=YAML_NUMBERS)
def test_load_pack_rejects_yaml_non_finite_numbers(field: str, value: str) -> None:
    """YAML's .inf/.nan and out-of-range literals load or fail with a field path."""
    scorecard = field.format(v=value)
    if not scorecard.startswith("dimensions"):
        scorecard += "\n      dimensions: [correctness]"
    text = ("pack: {slug: p, name: P, family: f}\nversion:\n  number: 1\n"
            "  evaluation_spec:\n    name: s\n    version_number: 1\n"
            "    judge_mode: deterministic\n    validators:\n"
            "      - {key: v, type: exact_match, target: final_output, "
            "expected_from: 'literal:x'}\n    scorecard:\n      " + scorecard + "\n"
            "challenges:\n  - {key: c1, title: C, category: x, difficulty: easy}\n")
    try:
        scoring.load_pack(text)
    except SpecError as err:
        _assert_fields(err)


JSON_LEAVES = st.one_of(st.none(), st.booleans(), NUMBERS, st.text(max_size=8))
PAYLOAD_VALUES = st.recursive(JSON_LEAVES, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=5), inner, max_size=3)),
    max_leaves=8)
PAYLOAD_KEYS = ["final_output", "latency_ms", "total_tokens", "input_tokens", "output_tokens",
                "usage", "provider_key", "model", "first_output_at", "tool_name", "arguments"]
EVENT_TYPES = ["system.run.started", "system.run.completed", "system.run.failed",
               "model.call.completed", "system.output.finalized", "tool.call.completed",
               "tool.call.failed", "grader.verification.file_captured"]


@st.composite
def events(draw: st.DrawFn) -> list[Any]:
    out = []
    for i in range(draw(st.integers(0, 5))):
        payload = draw(st.dictionaries(st.sampled_from(PAYLOAD_KEYS), PAYLOAD_VALUES,
                                       max_size=4))
        event: dict[str, Any] = {"type": draw(st.sampled_from(EVENT_TYPES)),
                                 "occurred_at": T0, "payload": payload}
        if draw(st.booleans()):
            event["sequence_number"] = draw(st.integers(-5, 2**70)) if i % 4 else draw(NUMBERS)
        out.append(draw(PAYLOAD_VALUES) if draw(st.integers(0, 19)) == 19 else event)
    return out


SPEC = scoring.load_spec(BASE)
PREFERENCES = st.one_of(st.none(), st.floats(0, 1), NUMBERS, st.booleans(), st.text(max_size=3))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(run=events(), preference=PREFERENCES)
def test_evaluate_never_crashes(run: list[Any], preference: Any) -> None:
    """Any events and any human preference: a finite scorecard, or an InputError."""
    try:
        card = scoring.evaluate(SPEC, run, [{"challenge_key": "c", "case_key": "k",
                                             "payload": {"q": 1}}],
                                human_preference=preference)
    except InputError as err:
        _assert_fields(err)
        in_range = isinstance(preference, int | float) and not isinstance(preference, bool) \
            and math.isfinite(preference) and 0 <= preference <= 1
        assert preference is None or in_range or \
            "human_preference" in [e.field for e in err.errors]
        return
    _assert_finite(card)
    if preference is not None:
        assert card.dimensions["pref"].score == preference
