"""Load-time validation of metrics, the behavioral block, pricing rows and the general
judge rules (docs/scoring.md §3).

The builders and stand-in kinds are in ``spec_builders``; its ``kinds`` fixture
registers them for every test here.
"""

from __future__ import annotations

from typing import Any

import pytest
from spec_builders import (  # noqa: F401  (kinds: an autouse fixture)
    B,
    Finding,
    J,
    M,
    P,
    _ids,
    body,
    findings,
    judge,
    kinds,
    validator,
)

METRICS = [
    ("key-blank", [{"key": "", "type": "numeric", "collector": "run_total_latency_ms"}],
     [(f"{M}[0].key", "is required")]),
    ("key-duplicate", [{"key": "m", "type": "numeric", "collector": "a"},
                       {"key": "m", "type": "text", "collector": "b"}],
     [(f"{M}[1].key", "must be unique")]),
    ("key-may-equal-validator-key", [{"key": "v", "type": "numeric", "collector": "a"}], []),
    ("type-unknown", [{"key": "m", "type": "float", "collector": "a"}],
     [(f"{M}[0].type", "is not a supported metric type")]),
    ("collector-blank", [{"key": "m", "type": "boolean", "collector": " "}],
     [(f"{M}[0].collector", "is required")]),
    ("collector-calibration", [{"key": "m", "type": "numeric",
                                "collector": "behavioral_confidence_calibration_score"}],
     [(f"{M}[0].collector", "is not supported until confidence reporting lands")]),
    ("collector-unknown-accepted", [{"key": "m", "type": "numeric", "collector": "made_up"}],
     []),
]


BEHAVIORAL = [
    ("no-signals", {"signals": []}, [(f"{B}.signals", "must contain at least one signal")]),
    ("signal-unknown", {"signals": [{"key": "speed", "weight": 1}]},
     [(f"{B}.signals[0].key", "must be one of recovery_behavior, exploration_efficiency, "
       "error_cascade, scope_adherence, confidence_calibration")]),
    ("signal-key-blank", {"signals": [{"key": "", "weight": 1}]},
     [(f"{B}.signals[0].key", "must be one of recovery_behavior, exploration_efficiency, "
       "error_cascade, scope_adherence, confidence_calibration")]),
    ("signal-duplicate", {"signals": [{"key": "error_cascade", "weight": 1},
                                      {"key": "error_cascade", "weight": 2}]},
     [(f"{B}.signals[1].key", "must be unique")]),
    ("signal-calibration", {"signals": [{"key": "confidence_calibration", "weight": 1}]},
     [(f"{B}.signals[0].key", "is not supported until confidence reporting lands")]),
    ("weight-zero", {"signals": [{"key": "scope_adherence", "weight": 0}]},
     [(f"{B}.signals[0].weight", "must be greater than 0")]),
    ("weight-missing", {"signals": [{"key": "scope_adherence"}]},
     [(f"{B}.signals[0].weight", "must be greater than 0")]),
    ("gate-without-threshold", {"signals": [{"key": "recovery_behavior", "weight": 1,
                                             "gate": True}]},
     [(f"{B}.signals[0].pass_threshold", "is required when the signal is gated")]),
    ("gate-threshold-out-of-range", {"signals": [{"key": "recovery_behavior", "weight": 1,
                                                  "gate": True, "pass_threshold": 1.5}]},
     [(f"{B}.signals[0].pass_threshold", "must be between 0 and 1")]),
    ("ungated-threshold-out-of-range", {"signals": [{"key": "exploration_efficiency",
                                                     "weight": 1, "pass_threshold": -0.1}]},
     [(f"{B}.signals[0].pass_threshold", "must be between 0 and 1")]),
    ("valid", {"signals": [{"key": "recovery_behavior", "weight": 2, "gate": True,
                            "pass_threshold": 0.5}, {"key": "error_cascade", "weight": 1}]}, []),
]


PRICING = [
    ("provider-key-blank", [{"provider_key": " ", "provider_model_id": "gpt-4o"}],
     [(f"{P}[0].provider_key", "is required")]),
    ("model-id-blank", [{"provider_key": "openai", "provider_model_id": ""}],
     [(f"{P}[0].provider_model_id", "is required")]),
    ("input-cost-negative", [{"provider_key": "openai", "provider_model_id": "gpt-4o",
                              "input_cost_per_million_tokens": -1}],
     [(f"{P}[0].input_cost_per_million_tokens", "must be greater than or equal to 0")]),
    ("output-cost-negative", [{"provider_key": "openai", "provider_model_id": "gpt-4o",
                               "output_cost_per_million_tokens": -0.01}],
     [(f"{P}[0].output_cost_per_million_tokens", "must be greater than or equal to 0")]),
    ("duplicate-row", [{"provider_key": "openai", "provider_model_id": "gpt-4o"},
                       {"provider_key": "anthropic", "provider_model_id": "gpt-4o"},
                       {"provider_key": " openai", "provider_model_id": "gpt-4o "}],
     [(f"{P}[2]", "must be unique by provider_key and provider_model_id")]),
    ("zero-costs", [{"provider_key": "openai", "provider_model_id": "gpt-4o",
                     "input_cost_per_million_tokens": 0,
                     "output_cost_per_million_tokens": 0}], []),
]


JUDGES = [
    ("duplicate-key", {"judge_mode": "hybrid", "llm_judges": [judge(), judge()]},
     [(f"{J}[1].key", "must be unique")]),
    ("collides-with-validator", {"judge_mode": "hybrid", "llm_judges": [judge("v")]},
     [(f"{J}[0].key", 'collides with validator key "v"')]),
    ("collides-with-metric", {"judge_mode": "llm_judge", "llm_judges": [judge("m")],
                              "metrics": [{"key": "m", "type": "numeric", "collector": "c"}]},
     [(f"{J}[0].key", 'collides with metric key "m"')]),
    ("deterministic-with-judges", {"judge_mode": "deterministic", "llm_judges": [judge()]},
     [(J, "must be empty when judge_mode is deterministic")]),
    ("llm-judge-without-judges", {"judge_mode": "llm_judge"},
     [(J, "must contain at least one judge when judge_mode is llm_judge")]),
    ("hybrid-without-judges", {"judge_mode": "hybrid"},
     [(J, "must contain at least one judge when judge_mode is hybrid")]),
    ("hybrid-with-judge", {"judge_mode": "hybrid", "llm_judges": [judge()]}, []),
]


@pytest.mark.parametrize(("case", "metrics", "expected"), METRICS, ids=_ids(METRICS))
def test_metrics(case: str, metrics: list[dict[str, Any]], expected: list[Finding]) -> None:
    """Metrics: key unique among metrics, type, collector required, calibration rejected."""
    assert findings(body(metrics=metrics)) == expected


@pytest.mark.parametrize(("case", "block", "expected"), BEHAVIORAL, ids=_ids(BEHAVIORAL))
def test_behavioral_block(case: str, block: dict[str, Any], expected: list[Finding]) -> None:
    """Behavioral signals: known, unique, not calibration, weight > 0, thresholds in [0,1]."""
    assert findings(body(behavioral=block)) == expected


@pytest.mark.parametrize(("case", "rows", "expected"), PRICING, ids=_ids(PRICING))
def test_pricing(case: str, rows: list[dict[str, Any]], expected: list[Finding]) -> None:
    """Pricing rows: ids required, costs ≥ 0, unique by (provider_key, provider_model_id)."""
    assert findings(body(pricing={"models": rows})) == expected


@pytest.mark.parametrize(("case", "fields", "expected"), JUDGES, ids=_ids(JUDGES))
def test_judge_general_rules(case: str, fields: dict[str, Any],
                             expected: list[Finding]) -> None:
    """Judge keys are unique, collide with no validator/metric key, agree with judge_mode."""
    assert findings(body(**fields)) == expected
