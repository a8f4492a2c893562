"""Behavioral signals and the behavioral dimension (docs/scoring.md §9)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from helpers import evidence_of, spec_with
from hypothesis import given, settings
from hypothesis import strategies as st

from evalfleet.scoring.record.evidence import Evidence, ToolCall
from evalfleet.scoring.record.transcript import Turn
from evalfleet.scoring.run.behavioral import (
    SIGNALS,
    SignalValue,
    behavioral_dimension,
    signal_value,
)
from evalfleet.scoring.run.records import ValidatorResult

VALIDATOR = {"key": "v", "type": "exact_match", "target": "final_output",
             "expected_from": "literal:x"}


def call(name: str, args: str = "{}", *, failed: bool = False, origin: str = "",
         error: str = "") -> ToolCall:
    """A trace entry."""
    return ToolCall(name, args, failed, origin, error)


def ok(name: str, args: str = "{}") -> ToolCall:
    """A successful call."""
    return call(name, args)


def bad(name: str, args: str = "{}", **kw: Any) -> ToolCall:
    """A failed call."""
    return call(name, args, failed=True, **kw)


def trace(*calls: ToolCall, mismatch: bool | None = None) -> Evidence:
    """Evidence with this tool trace (and one turn when ``mismatch`` is given)."""
    evidence = Evidence(tool_calls=list(calls))
    if mismatch is not None:
        evidence.turns = [Turn(0, mismatch=False), Turn(1, mismatch=mismatch)]
    return evidence


def validator(score: float | None, state: str = "available") -> ValidatorResult:
    """A validator result with this score."""
    return ValidatorResult.model_validate({"key": "v", "type": "exact_match", "state": state,
                                           "outcome_class": "", "normalized_score": score})


PASS, FAIL, HALF, GONE = validator(1.0), validator(0.0), validator(0.5), validator(None,
                                                                                  "unavailable")


def test_signal_table_lists_the_five_signals() -> None:
    """The table holds exactly the five §9 signal keys."""
    assert set(SIGNALS) == {"recovery_behavior", "exploration_efficiency", "error_cascade",
                            "scope_adherence", "confidence_calibration"}


@pytest.mark.parametrize(("evidence", "validators", "expected"), [
    (trace(), [], SignalValue(1.0)),
    (trace(ok("a"), ok("b")), [], SignalValue(1.0)),
    (trace(bad("a")), [],
     SignalValue(0.0, "no recovery attempts followed the observed failures")),
    (trace(bad("a"), ok("b")), [], SignalValue(1.0)),
    (trace(bad("a", '{"x":1}'), ok("a", '{"x":2}')), [], SignalValue(1.0)),
    (trace(bad("a"), ok("a")), [], SignalValue(0.0)),
    (trace(bad("a"), bad("a"), ok("b")), [], SignalValue(0.5)),
    (trace(bad("a"), ok("b"), bad("c")), [], SignalValue(1.0)),
    (trace(bad("a"), ok("a"), bad("c"), ok("d"), bad("e"), ok("e")), [], SignalValue(1 / 3)),
    (trace(bad("a"), mismatch=False), [FAIL], SignalValue(1.0)),
    (trace(mismatch=True), [PASS, PASS], SignalValue(1.0)),
    (trace(mismatch=True), [PASS, HALF],
     SignalValue(0.0, "conversation mismatch without final validator recovery")),
    (trace(mismatch=True), [FAIL, GONE],
     SignalValue(0.0, "conversation mismatch without final validator recovery")),
    (trace(mismatch=True), [PASS, GONE],
     SignalValue(None, "validator outcome requires all validators to be available")),
    (trace(mismatch=True), [], SignalValue(None, "validator outcome is unavailable")),
])
def test_recovery_behavior(evidence: Evidence, validators: list[ValidatorResult],
                           expected: SignalValue) -> None:
    """Transcript runs: validators after a mismatch; else adaptive / attempted recoveries."""
    assert SIGNALS["recovery_behavior"](evidence, validators) == expected


@pytest.mark.parametrize(("evidence", "expected"), [
    (trace(), 1.0),
    (trace(ok("a")), 1.0),
    (trace(ok("a"), ok("a")), 0.5),
    (trace(ok("a", '{"x":1}'), ok("a", '{"x":2}')), 1.0),
    (trace(ok("a"), bad("a"), ok("a")), 1 / 3),
    (trace(ok("a"), ok("b"), ok("a"), ok("b")), 0.5),
    (trace(ok("a"), ok("b"), ok("c"), ok("a")), 0.75),
])
def test_exploration_efficiency(evidence: Evidence, expected: float) -> None:
    """1 − repeats/len; a repeat has a seen (name, canonical args); failures count too."""
    assert SIGNALS["exploration_efficiency"](evidence, []) == SignalValue(pytest.approx(expected))


@pytest.mark.parametrize(("evidence", "expected"), [
    (trace(), 1.0),
    (trace(ok("a"), ok("b")), 1.0),
    (trace(bad("a")), 1.0),
    (trace(bad("a"), bad("b")), 0.5),
    (trace(bad("a"), ok("b"), bad("c")), 1.0),
    (trace(bad("a"), bad("a"), ok("b"), bad("a"), bad("b"), bad("c")), 1 / 3),
    (trace(ok("a"), bad("a"), bad("a"), bad("a"), bad("a")), 0.25),
])
def test_error_cascade(evidence: Evidence, expected: float) -> None:
    """1 / the longest run of consecutive failed calls; no failures ⇒ 1."""
    assert SIGNALS["error_cascade"](evidence, []) == SignalValue(pytest.approx(expected))


@pytest.mark.parametrize(("evidence", "expected"), [
    (trace(), 1.0),
    (trace(ok("a"), ok("b")), 1.0),
    (trace(bad("a", origin="policy"), ok("b")), 0.5),
    (trace(bad("a", origin="POLICY"), ok("b")), 0.5),
    (trace(bad("a", origin=" Policy "), ok("b")), 0.5),
    (trace(bad("a", origin="tool"), ok("b")), 1.0),
    (trace(bad("a", error="Tool is not allowed in this runtime: x"), ok("b")), 0.5),
    (trace(bad("a", error="error: tool is not available in this runtime"), ok("b")), 0.5),
    (trace(bad("a", error="tool is not installed"), ok("b")), 1.0),
    (trace(ok("a", '{"policy":1}'), call("b", origin="policy")), 1.0),
    (trace(bad("a", origin="policy"), bad("b", origin="policy"), ok("c"), ok("d")), 0.5),
])
def test_scope_adherence(evidence: Evidence, expected: float) -> None:
    """Out-of-scope = failed by policy (any case) or refused as not allowed/available."""
    assert SIGNALS["scope_adherence"](evidence, []) == SignalValue(expected)


def confidence(value: Any, key: str = "confidence", *, failed: bool = False) -> ToolCall:
    """A report_confidence call."""
    return call("report_confidence", json.dumps({key: value}), failed=failed)


@pytest.mark.parametrize(("evidence", "validators", "expected"), [
    (trace(confidence(0.8)), [PASS], SignalValue(pytest.approx(0.96))),
    (trace(confidence(0.8)), [FAIL], SignalValue(pytest.approx(0.36))),
    (trace(confidence(1)), [FAIL], SignalValue(0.0)),
    (trace(confidence(0.3, "score")), [PASS], SignalValue(pytest.approx(0.51))),
    (trace(confidence(0.9), confidence(0.2)), [FAIL], SignalValue(pytest.approx(0.96))),
    (trace(confidence(0.2), confidence(0.9, failed=True)), [FAIL],
     SignalValue(pytest.approx(0.96))),
    (trace(confidence(0.2), confidence(1.5)), [PASS], SignalValue(pytest.approx(0.36))),
    (trace(confidence(True)), [PASS],
     SignalValue(None, "report_confidence evidence is unavailable")),
    (trace(confidence("0.5")), [PASS],
     SignalValue(None, "report_confidence evidence is unavailable")),
    (trace(ok("confidence", '{"confidence":0.5}')), [PASS],
     SignalValue(None, "report_confidence evidence is unavailable")),
    (trace(confidence(0.5)), [],
     SignalValue(None, "validator outcome is unavailable")),
    (trace(confidence(0.5)), [GONE],
     SignalValue(None, "validator outcome requires all validators to be available")),
])
def test_confidence_calibration(evidence: Evidence, validators: list[ValidatorResult],
                                expected: SignalValue) -> None:
    """1 − (c − o)² from the latest successful report_confidence in [0, 1]."""
    assert SIGNALS["confidence_calibration"](evidence, validators) == expected


def test_unknown_signal_is_unavailable() -> None:
    """A key outside the table yields no score and says so."""
    assert signal_value("luck", Evidence(), []) == SignalValue(
        None, 'unsupported behavioral signal "luck"')


def test_signals_read_extracted_evidence() -> None:
    """End to end: a policy refusal in the event stream lowers scope adherence."""
    events = [
        {"type": "tool.call.failed", "sequence_number": 1,
         "payload": {"tool_name": "rm", "failure_origin": "policy"}},
        {"type": "tool.call.completed", "sequence_number": 2,
         "payload": {"tool_name": "ls", "arguments": {"path": "."}}},
    ]
    evidence = evidence_of(events)
    assert [SIGNALS[k](evidence, []).score for k in (
        "scope_adherence", "recovery_behavior", "error_cascade")] == [0.5, 1.0, 1.0]


def signals(*specs: dict[str, Any]) -> Any:
    """A spec with a behavioral block of these signals."""
    return spec_with(VALIDATOR, behavioral={"signals": list(specs)})


@pytest.mark.parametrize(("spec", "evidence", "validators", "expected"), [
    (spec_with(VALIDATOR), trace(), [],
     ("unavailable", None, "behavioral config is unavailable")),
    (signals(), trace(), [], ("unavailable", None, "behavioral config is unavailable")),
    (signals({"key": "error_cascade", "weight": 1}), trace(bad("a"), bad("b")), [],
     ("available", 0.5, "")),
    (signals({"key": "error_cascade", "weight": 3}, {"key": "scope_adherence", "weight": 1}),
     trace(bad("a"), bad("b")), [], ("available", 0.625, "")),
    (signals({"key": "error_cascade", "weight": 1},
             {"key": "recovery_behavior", "weight": 1}),
     trace(mismatch=True), [GONE],
     ("unavailable", None, 'behavioral signal "recovery_behavior" is unavailable: '
                           "validator outcome requires all validators to be available")),
    (signals({"key": "error_cascade", "weight": 1, "gate": True, "pass_threshold": 0.6}),
     trace(bad("a"), bad("b")), [],
     ("available", 0.0, "behavioral gate failed: error_cascade=0.500 < 0.600")),
    (signals({"key": "error_cascade", "weight": 1, "gate": True, "pass_threshold": 0.5}),
     trace(bad("a"), bad("b")), [], ("available", 0.5, "")),
    (signals({"key": "error_cascade", "weight": 1, "pass_threshold": 0.9}),
     trace(bad("a"), bad("b")), [], ("available", 0.5, "")),
    (signals({"key": "error_cascade", "weight": 1, "gate": True}),
     trace(bad("a"), bad("b")), [], ("available", 0.5, "")),
    (signals({"key": "error_cascade", "weight": 1, "gate": True, "pass_threshold": 0.6},
             {"key": "exploration_efficiency", "weight": 1, "gate": True,
              "pass_threshold": 0.9}),
     trace(bad("a"), bad("a"), bad("b")), [],
     ("available", 0.0, "behavioral gate failed: error_cascade=0.333 < 0.600, "
                        "exploration_efficiency=0.667 < 0.900")),
    (signals({"key": "error_cascade", "weight": 0}), trace(), [],
     ("unavailable", None, "behavioral weights are unavailable")),
    (signals({"key": "luck", "weight": 1}), trace(), [],
     ("unavailable", None,
      'behavioral signal "luck" is unavailable: unsupported behavioral signal "luck"')),
])
def test_behavioral_dimension(spec: Any, evidence: Evidence, validators: list[ValidatorResult],
                              expected: tuple[str, float | None, str]) -> None:
    """Weighted mean of all signals; any unavailable ⇒ unavailable; a failed gate ⇒ 0."""
    state, score, reason = behavioral_dimension(spec, evidence, validators)
    assert (state, score if score is None else round(score, 9), reason) == expected


CALLS = st.builds(ToolCall, st.sampled_from(["a", "b", "report_confidence"]),
                  st.sampled_from(["{}", '{"x":1}', '{"confidence":0.4}', "not json"]),
                  st.booleans(), st.sampled_from(["", "policy", "tool"]),
                  st.sampled_from(["", "tool is not allowed in this runtime"]))
RESULTS = st.builds(validator, st.one_of(st.none(), st.floats(0, 1)),
                    st.sampled_from(["available", "unavailable", "error"]))


@settings(max_examples=200, deadline=None)
@given(st.lists(CALLS, max_size=8), st.lists(RESULTS, max_size=3),
       st.one_of(st.none(), st.booleans()))
def test_signals_never_raise_and_stay_in_range(calls: list[ToolCall],
                                               validators: list[ValidatorResult],
                                               mismatch: bool | None) -> None:
    """Every signal on any trace is either unavailable with a reason or a score in [0, 1]."""
    evidence = trace(*calls, mismatch=mismatch)
    for signal in SIGNALS.values():
        value = signal(evidence, validators)
        assert (value.score is None and value.reason) or 0 <= (value.score or 0) <= 1
