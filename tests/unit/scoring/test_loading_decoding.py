"""Strict decoding of the spec (docs/scoring.md §2.1): unknown fields rejected by name,
wrong JSON types, configs opaque or lenient by validator type.
"""

from __future__ import annotations

from typing import Any

import pytest
from load_helpers import SPEC, SPEC_YAML, E, errors_of, spec_body

from evalfleet.scoring import load_spec

# --- strict decoding ----------------------------------------------------------------------

UNKNOWN_FIELDS = [
    ("top-level", spec_body(gait=1), f"{E}.gait", "gait"),
    ("validator", spec_body(validators=[{**SPEC["validators"][0], "wieght": 2}]),
     f"{E}.validators[0].wieght", "wieght"),
    ("scorecard", spec_body(scorecard={"dimensions": ["correctness"], "pas_threshold": 0.5}),
     f"{E}.scorecard.pas_threshold", "pas_threshold"),
    ("dimension-wieght", spec_body(scorecard={"dimensions": [{"key": "correctness",
                                                              "wieght": 2}]}),
     f"{E}.scorecard.dimensions[0].wieght", "wieght"),
    ("dimension-gait", spec_body(scorecard={"dimensions": ["correctness",
                                                           {"key": "cost", "gait": True}]}),
     f"{E}.scorecard.dimensions[1].gait", "gait"),
    ("dimension-pas-threshold", spec_body(scorecard={"dimensions": [
        {"key": "correctness", "gate": True, "pas_threshold": 1}]}),
     f"{E}.scorecard.dimensions[0].pas_threshold", "pas_threshold"),
    ("dimension-envelope", spec_body(scorecard={"dimensions": [
        {"key": "latency", "normalization": {"target": 1, "maximum": 2}}]}),
     f"{E}.scorecard.dimensions[0].normalization.maximum", "maximum"),
    ("legacy-normalization", spec_body(scorecard={"dimensions": ["correctness"], "normalization":
                                                  {"latency": {"target_ms": 1, "max": 2}}}),
     f"{E}.scorecard.normalization.latency.max", "max"),
    ("runtime-limits", spec_body(runtime_limits={"max_tokens": 5}),
     f"{E}.runtime_limits.max_tokens", "max_tokens"),
    ("post-execution-check", spec_body(post_execution_checks=[
        {"key": "out", "type": "file_capture", "path": "/x", "max_bytes": 1}]),
     f"{E}.post_execution_checks[0].max_bytes", "max_bytes"),
    ("metric", spec_body(metrics=[{"key": "m", "type": "numeric", "collector": "c",
                                   "units": "ms"}]),
     f"{E}.metrics[0].units", "units"),
    ("behavioral-signal", spec_body(behavioral={"signals": [{"key": "error_cascade",
                                                            "wieght": 1}]}),
     f"{E}.behavioral.signals[0].wieght", "wieght"),
    ("pricing-row", spec_body(pricing={"models": [{"provider_key": "openai",
                                                    "provider_model_id": "gpt-4o",
                                                    "input_cost": 1}]}),
     f"{E}.pricing.models[0].input_cost", "input_cost"),
    ("judge-consensus", spec_body(llm_judges=[{"key": "j", "consensus": {"method": "mean"}}]),
     f"{E}.llm_judges[0].consensus.method", "method"),
    ("judge-limits", spec_body(scorecard={"dimensions": ["correctness"],
                                          "judge_limits": {"max_calls": 1}}),
     f"{E}.scorecard.judge_limits.max_calls", "max_calls"),
]


@pytest.mark.parametrize(("case", "body", "field", "name"), UNKNOWN_FIELDS,
                         ids=[u[0] for u in UNKNOWN_FIELDS])
def test_unknown_fields_are_rejected(case: str, body: dict[str, Any], field: str,
                                     name: str) -> None:
    """An unknown field at any depth of the spec is rejected, naming the field."""
    assert errors_of(body) == [(field, f'unknown field "{name}"')]


def test_decoding_findings_are_collected() -> None:
    """Several decoding problems are all reported, not just the first."""
    body = spec_body(version_number="1", gait=True,
                     scorecard={"dimensions": [{"key": "correctness", "wieght": 1}]})
    assert errors_of(body) == [
        (f"{E}.version_number", "must be an integer"),
        (f"{E}.scorecard.dimensions[0].wieght", 'unknown field "wieght"'),
        (f"{E}.gait", 'unknown field "gait"'),
    ]


WRONG_TYPES = [
    ("version-as-string", {"version_number": "1"}, f"{E}.version_number", "must be an integer"),
    ("version-as-float", {"version_number": 1.5}, f"{E}.version_number", "must be an integer"),
    ("version-as-bool", {"version_number": True}, f"{E}.version_number", "must be an integer"),
    ("name-as-number", {"name": 5}, f"{E}.name", "must be a string"),
    ("validators-as-object", {"validators": {}}, f"{E}.validators", "must be a list"),
    ("scorecard-as-list", {"scorecard": []}, f"{E}.scorecard", "must be an object"),
    ("dimension-as-number", {"scorecard": {"dimensions": [5]}}, f"{E}.scorecard.dimensions[0]",
     "must be an object"),
    ("weight-as-string", {"scorecard": {"dimensions": [{"key": "correctness", "weight": "2"}]}},
     f"{E}.scorecard.dimensions[0].weight", "must be a number"),
    ("gate-as-string", {"scorecard": {"dimensions": [{"key": "correctness", "gate": "yes"}]}},
     f"{E}.scorecard.dimensions[0].gate", "must be a boolean"),
]


@pytest.mark.parametrize(("case", "fields", "field", "message"), WRONG_TYPES,
                         ids=[w[0] for w in WRONG_TYPES])
def test_wrong_json_types_are_rejected(case: str, fields: dict[str, Any], field: str,
                                       message: str) -> None:
    """JSON values of the wrong type are rejected at their path, without coercion."""
    assert errors_of(spec_body(**fields)) == [(field, message)]


def test_integers_are_accepted_for_number_fields() -> None:
    """An integral JSON number is a valid float field (weights, costs, thresholds)."""
    spec = load_spec(spec_body(runtime_limits={"max_cost_usd": 2},
                               scorecard={"dimensions": [{"key": "correctness", "weight": 2,
                                                          "gate": True, "pass_threshold": 1}]}))
    assert spec.scorecard.dimensions[0].weight == 2
    assert spec.runtime_limits is not None and spec.runtime_limits.max_cost_usd == 2


@pytest.mark.parametrize("config", [[1, 2], "text", {"anything": {"goes": True}}, None],
                         ids=["list", "string", "object", "null"])
def test_ignored_validator_config_is_opaque(config: Any) -> None:
    """Validator config is raw JSON at decoding; an ignored-config type accepts any value."""
    body = spec_body(validators=[{**SPEC["validators"][0], "config": config}])
    assert load_spec(body).validators[0].config == config


def test_lenient_file_validator_config_loads() -> None:
    """file_content_match with the shipped packs' wrong key ``{mode: contains}`` loads fine."""
    text = SPEC_YAML.replace("validators:\n", """\
post_execution_checks:
  - {key: out, type: file_capture, path: /workspace/out.txt}
validators:
  - key: file
    type: file_content_match
    target: file:out
    expected_from: literal:done
    config:
      mode: contains
""")
    spec = load_spec(text)
    assert spec.validators[0].config == {"mode": "contains"}
