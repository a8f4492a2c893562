"""Load-time validation, general rules: top level, runtime limits, scorecard, and how
findings are collected (docs/scoring.md §3 and the appendix).

The builders and stand-in kinds are in ``spec_builders``; its ``kinds`` fixture
registers them for every test here.
"""

from __future__ import annotations

from typing import Any

import pytest
from spec_builders import (  # noqa: F401  (kinds: an autouse fixture)
    D,
    EvaluationSpec,
    FieldError,
    Finding,
    S,
    V,
    _ids,
    body,
    card,
    findings,
    judge,
    kinds,
    validate_spec,
    validator,
)

TOP_LEVEL = [
    ("valid-minimal", body(), []),
    ("blank-name", body(name="   "), [("evaluation_spec.name", "is required")]),
    ("missing-name", {k: v for k, v in body().items() if k != "name"},
     [("evaluation_spec.name", "is required")]),
    ("version-zero", body(version_number=0),
     [("evaluation_spec.version_number", "must be greater than 0")]),
    ("version-negative", body(version_number=-3),
     [("evaluation_spec.version_number", "must be greater than 0")]),
    ("judge-mode-unknown", body(judge_mode="auto"),
     [("evaluation_spec.judge_mode", "must be one of deterministic, llm_judge, hybrid")]),
    ("judge-mode-blank", body(judge_mode=""),
     [("evaluation_spec.judge_mode", "must be one of deterministic, llm_judge, hybrid")]),
    ("no-validators", body(validators=[]),
     [(V, "must contain at least one validator")]),
    ("no-dimensions", body(scorecard=card()),
     [(D, "must contain at least one dimension")]),
    ("strategy-unknown", body(scorecard=card("correctness", strategy="ranked")),
     [("evaluation_spec.scorecard.strategy", "must be one of weighted, binary, hybrid")]),
    ("strategy-padded-not-trimmed", body(scorecard=card("correctness", strategy=" weighted ")),
     [("evaluation_spec.scorecard.strategy", "must be one of weighted, binary, hybrid")]),
]


RUNTIME_LIMITS = [
    ("max-total-tokens-zero", {"max_total_tokens": 0},
     [("evaluation_spec.runtime_limits.max_total_tokens", "must be greater than 0")]),
    ("max-cost-negative", {"max_cost_usd": -0.5},
     [("evaluation_spec.runtime_limits.max_cost_usd", "must be greater than 0")]),
    ("max-duration-zero", {"max_duration_ms": 0},
     [("evaluation_spec.runtime_limits.max_duration_ms", "must be greater than 0")]),
    ("max-iterations-zero", {"max_iterations": 0},
     [("evaluation_spec.runtime_limits.max_iterations", "must be between 1 and 1000")]),
    ("max-iterations-1001", {"max_iterations": 1001},
     [("evaluation_spec.runtime_limits.max_iterations", "must be between 1 and 1000")]),
    ("all-in-range", {"max_total_tokens": 1, "max_cost_usd": 0.01, "max_duration_ms": 1,
                      "max_iterations": 1000}, []),
    ("max-iterations-one", {"max_iterations": 1}, []),
]


SCORECARD = [
    ("binary-dimension-needs-threshold", card("correctness", strategy="binary"),
     [(f"{D}[0].pass_threshold",
       "is required when the dimension is gated or strategy is binary")]),
    ("binary-with-thresholds",
     card({"key": "correctness", "pass_threshold": 0.5}, strategy="binary"), []),
    ("binary-forbids-scorecard-threshold",
     card({"key": "correctness", "pass_threshold": 0.5}, strategy="binary", pass_threshold=0.5),
     [(f"{S}.pass_threshold", "must not be set for binary strategy; use per-dimension "
                              "pass_threshold instead")]),
    ("threshold-above-one", card("correctness", pass_threshold=1.5),
     [(f"{S}.pass_threshold", "must be between 0 and 1")]),
    ("threshold-below-zero", card({"key": "correctness", "gate": True, "pass_threshold": 1},
                                  strategy="hybrid", pass_threshold=-0.1),
     [(f"{S}.pass_threshold", "must be between 0 and 1")]),
    ("hybrid-without-gate", card("correctness", strategy="hybrid"),
     [(f"{S}.strategy", "hybrid strategy requires at least one gated dimension")]),
    ("hybrid-with-gate",
     card({"key": "correctness", "gate": True, "pass_threshold": 1}, strategy="hybrid"), []),
    ("judge-limits-samples-above-ten", card("correctness",
                                            judge_limits={"max_samples_per_judge": 11}),
     [(f"{S}.judge_limits.max_samples_per_judge", "must be between 0 and 10")]),
    ("judge-limits-negative-usd", card("correctness", judge_limits={"max_calls_usd": -1}),
     [(f"{S}.judge_limits.max_calls_usd", "must be greater than or equal to 0")]),
    ("judge-limits-negative-tokens", card("correctness", judge_limits={"max_tokens": -1}),
     [(f"{S}.judge_limits.max_tokens", "must be greater than or equal to 0")]),
    ("judge-limits-zeros", card("correctness", judge_limits={
        "max_samples_per_judge": 0, "max_calls_usd": 0, "max_tokens": 0}), []),
]


@pytest.mark.parametrize(("case", "spec", "expected"), TOP_LEVEL, ids=_ids(TOP_LEVEL))
def test_top_level(case: str, spec: dict[str, Any], expected: list[Finding]) -> None:
    """Top-level rules: name, version_number, judge_mode, validators, dimensions, strategy."""
    assert findings(spec) == expected


@pytest.mark.parametrize(("case", "limits", "expected"), RUNTIME_LIMITS,
                         ids=_ids(RUNTIME_LIMITS))
def test_runtime_limits(case: str, limits: dict[str, Any], expected: list[Finding]) -> None:
    """Runtime limits must be positive when set; max_iterations lies in 1..1000."""
    assert findings(body(runtime_limits=limits)) == expected


@pytest.mark.parametrize(("case", "scorecard", "expected"), SCORECARD, ids=_ids(SCORECARD))
def test_scorecard(case: str, scorecard: dict[str, Any], expected: list[Finding]) -> None:
    """Scorecard rules: binary thresholds, scorecard pass_threshold, hybrid gate, judge limits."""
    assert findings(body(scorecard=scorecard)) == expected


def test_findings_are_collected_not_fail_fast() -> None:
    """A spec with three unrelated problems yields all three findings, in rule order."""
    spec = body(name="", validators=[validator(target="bogus")],
                scorecard=card({"key": "correctness", "weight": -2}))
    assert findings(spec) == [
        ("evaluation_spec.name", "is required"),
        (f"{V}[0].target", "must be a supported evidence reference"),
        (f"{D}[0].weight", "must be greater than or equal to 0"),
    ]


def test_several_findings_on_one_validator_are_all_reported() -> None:
    """One validator with a blank key, bad target and missing expected_from gets three findings."""
    spec = body(validators=[validator(key="", target="nowhere", expected_from=None)])
    assert findings(spec) == [
        (f"{V}[0].key", "is required"),
        (f"{V}[0].target", "must be a supported evidence reference"),
        (f"{V}[0].expected_from", "is required"),
    ]


def test_root_reprefixes_every_path() -> None:
    """Pack-level validation re-prefixes every path with ``version.``."""
    spec = body(name="", scorecard=card({"key": "correctness", "validators": ["x"]}))
    assert findings(spec, "version.evaluation_spec") == [
        ("version.evaluation_spec.name", "is required"),
        ("version.evaluation_spec.scorecard.dimensions[0].validators[0]",
         'references unknown validator key "x"'),
    ]


def test_validation_returns_field_errors_without_lines() -> None:
    """validate_spec returns FieldError values; lines are added only by the YAML loader."""
    [error] = validate_spec(EvaluationSpec.model_validate(body(version_number=0)))
    assert error == FieldError("evaluation_spec.version_number", "must be greater than 0")
    assert error.line is None
