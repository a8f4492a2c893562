"""Load-time validation of an evaluation spec (scoring-semantics §3 and the appendix).

Every case states the exact ``(field path, message)`` findings a spec must produce. Rules
specific to one validator type (``config_rules``) or to LLM judges are tested elsewhere;
here are the general rules, including the generic config handling in ``validation.py``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel

from scoring import validators as registry
from scoring.errors import FieldError
from scoring.spec import EvaluationSpec
from scoring.validation import validate_spec
from scoring.validators.base import CheckInput, Kind, LenientConfig, Outcome, StrictConfig

V = "evaluation_spec.validators"
D = "evaluation_spec.scorecard.dimensions"
SOURCES = "must be one of validators, metric, reliability, latency, cost, behavioral, llm_judge"

Finding = tuple[str, str]


# --- builders ----------------------------------------------------------------------------


def validator(key: str = "v", vtype: str = "contains", target: str = "final_output",
              expected_from: str | None = "literal:x", **extra: Any) -> dict[str, Any]:
    """One validator declaration (``expected_from=None`` leaves it out)."""
    decl: dict[str, Any] = {"key": key, "type": vtype, "target": target, **extra}
    if expected_from is not None:
        decl["expected_from"] = expected_from
    return decl


def body(**fields: Any) -> dict[str, Any]:
    """A valid minimal spec mapping with ``fields`` replacing top-level fields."""
    spec: dict[str, Any] = {
        "name": "spec", "version_number": 1, "judge_mode": "deterministic",
        "validators": [validator()], "scorecard": {"dimensions": ["correctness"]},
    }
    spec.update(fields)
    return spec


def card(*dimensions: Any, **fields: Any) -> dict[str, Any]:
    """A scorecard block with the given dimensions."""
    return {"dimensions": list(dimensions), **fields}


def capture(key: str = "out", ctype: str = "file_capture", path: str = "/work/out.txt",
            **extra: Any) -> dict[str, Any]:
    """One post-execution check declaration."""
    return {"key": key, "type": ctype, "path": path, **extra}


def judge(key: str = "j", **extra: Any) -> dict[str, Any]:
    """A judge declaration valid under the judge rules of §3."""
    return {"key": key, "mode": "rubric", "rubric": "Is it good?", "model": "claude-x", **extra}


def envelope(target: float | None = 100, maximum: float | None = 1000) -> dict[str, Any]:
    """A normalization envelope (``None`` leaves the bound out)."""
    found: dict[str, Any] = {}
    if target is not None:
        found["target"] = target
    if maximum is not None:
        found["max"] = maximum
    return found


def findings(spec: dict[str, Any], root: str = "evaluation_spec") -> list[Finding]:
    """The ``(field, message)`` pairs validation reports for ``spec``."""
    return [(f.field, f.message) for f in validate_spec(EvaluationSpec.model_validate(spec), root)]


# --- stand-in validator kinds ------------------------------------------------------------


def _never(given: CheckInput) -> Outcome:
    return Outcome.error("stand-in kind, not for evaluation")


class _PostconditionConfig(StrictConfig):
    condition: str = ""
    value: Any = None
    json_path: str = ""


class _LooseConfig(LenientConfig):
    match_mode: str = "contains"


class _StrictConfig(StrictConfig):
    threshold: float = 0.5


def _threshold_rule(config: Any, path: str) -> list[FieldError]:
    if not 0 <= config.threshold <= 1:
        return [FieldError(f"{path}.threshold", "must be between 0 and 1")]
    return []


def _kind(name: str, config: type[BaseModel] | None = None, **traits: Any) -> Kind:
    return Kind(name, _never, config=config, **traits)


# The general rules in validation.py read only these traits of a kind (§3): used for
# the types other people have not registered yet, so these tests do not wait for them.
STAND_INS = {
    "file_content_match": _kind("file_content_match", _LooseConfig, strictness="lenient",
                                needs_file_target=True),
    "file_exists": _kind("file_exists", _LooseConfig, strictness="lenient", expected="ignored",
                         needs_file_target=True),
    "file_json_schema": _kind("file_json_schema", _LooseConfig, strictness="lenient",
                              expected="ignored", needs_file_target=True),
    "directory_structure": _kind("directory_structure", _LooseConfig, strictness="lenient",
                                 expected="ignored", needs_file_target=True),
    "code_execution": _kind("code_execution", strictness="ignored", expected="ignored",
                            needs_file_target=True),
    "postcondition": _kind("postcondition", _PostconditionConfig, strictness="strict",
                           expected="omitted", needs_file_target=True, config_required=True),
    "tool_call_assertion": _kind("tool_call_assertion", strictness="ignored",
                                 expected="omitted", config_required=True),
}
# Test-only kinds that pin the generic config handling with exact messages.
FAKES = {
    "x_strict": _kind("x_strict", _StrictConfig, strictness="strict",
                      config_rules=_threshold_rule),
    "x_lenient_required": _kind("x_lenient_required", _LooseConfig, strictness="lenient",
                                config_required=True),
}


@pytest.fixture(autouse=True)
def kinds(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Register stand-ins for validator types not registered yet, and the test-only kinds."""
    for name, kind in STAND_INS.items():
        if registry.lookup(name) is None:
            monkeypatch.setitem(registry.VALIDATORS, name, kind)
    for name, kind in FAKES.items():
        monkeypatch.setitem(registry.VALIDATORS, name, kind)
    yield


# Configs valid under each type's own rules (§5), so only the rule under test fires.
CODE = {"test_command": "pytest -q"}
TOOL = {"tool_name": "search"}
POST = {"condition": "exists"}


# --- the cases ---------------------------------------------------------------------------

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

VALIDATORS = [
    ("key-blank", [validator(key=" ")], [(f"{V}[0].key", "is required")]),
    ("key-duplicate", [validator(), validator(), validator()],
     [(f"{V}[1].key", "must be unique"), (f"{V}[2].key", "must be unique")]),
    ("key-duplicate-after-trim", [validator(key="v"), validator(key=" v ")],
     [(f"{V}[1].key", "must be unique")]),
    ("type-unknown", [validator(vtype="exact_mtach")],
     [(f"{V}[0].type", "is not a supported validator type")]),
    ("type-unknown-still-checks-references",
     [validator(vtype="nope", target="", expected_from="bogus")],
     [(f"{V}[0].type", "is not a supported validator type"),
      (f"{V}[0].target", "is required"),
      (f"{V}[0].expected_from", "must be a supported evidence reference")]),
    ("target-missing", [validator(target="")], [(f"{V}[0].target", "is required")]),
    ("target-blank", [validator(target="  ")], [(f"{V}[0].target", "is required")]),
    ("target-unsupported", [validator(target="output")],
     [(f"{V}[0].target", "must be a supported evidence reference")]),
    ("target-tool-calls-on-contains", [validator(target="tool_calls")],
     [(f"{V}[0].target", "must be a supported evidence reference")]),
    ("target-empty-dotted-segment", [validator(target="case.payload..answer")],
     [(f"{V}[0].target", "must be a supported evidence reference")]),
    ("target-file-blank-key", [validator(target="file: ")],
     [(f"{V}[0].target", "must be a supported evidence reference")]),
    ("target-last-n-zero", [validator(target="transcript.last_n:0")],
     [(f"{V}[0].target", "must be a supported evidence reference")]),
    ("target-last-n-three", [validator(target="transcript.last_n:3")], []),
    ("target-case-expectation", [validator(target="case.expectations.answer")], []),
    ("expected-from-missing", [validator(expected_from=None)],
     [(f"{V}[0].expected_from", "is required")]),
    ("expected-from-unsupported", [validator(expected_from="answer")],
     [(f"{V}[0].expected_from", "must be a supported evidence reference")]),
    ("expected-from-empty-literal", [validator(expected_from="literal:")], []),
    ("expected-from-file-without-checks", [validator(expected_from="file:gold")], []),
]

FILE_VALIDATORS = [
    ("content-match-needs-file-prefix",
     [validator(vtype="file_content_match", target="final_output")], [],
     [(f"{V}[0].target", "must use file: prefix for file validators")]),
    ("unsupported-and-not-file-both-reported",
     [validator(vtype="file_content_match", target="output")], [],
     [(f"{V}[0].target", "must be a supported evidence reference"),
      (f"{V}[0].target", "must use file: prefix for file validators")]),
    ("content-match-needs-expected-from",
     [validator(vtype="file_content_match", target="file:out", expected_from=None)], [],
     [(f"{V}[0].expected_from", "is required")]),
    ("file-exists-needs-file-prefix",
     [validator(vtype="file_exists", target="final_output", expected_from=None)], [],
     [(f"{V}[0].target", "must use file: prefix for file validators")]),
    ("file-exists-expected-from-ignored",
     [validator(vtype="file_exists", target="file:out", expected_from="not a reference")], [],
     []),
    ("file-json-schema-expected-from-optional",
     [validator(vtype="file_json_schema", target="file:out", expected_from=None)], [], []),
    ("directory-structure-needs-file-prefix",
     [validator(vtype="directory_structure", target="case.payload", expected_from=None)], [],
     [(f"{V}[0].target", "must use file: prefix for file validators")]),
    ("no-checks-file-target-not-cross-checked",
     [validator(vtype="file_content_match", target="file:anything")], [], []),
    ("checks-declared-unknown-key-on-file-validator",
     [validator(vtype="file_exists", target="file:missing", expected_from=None)],
     [capture("out")],
     [(f"{V}[0].target", 'references unknown post_execution_check key "missing"')]),
    ("checks-declared-unknown-key-on-contains",
     [validator(target="file:nope")], [capture("out")],
     [(f"{V}[0].target", 'references unknown post_execution_check key "nope"')]),
    ("checks-declared-known-key",
     [validator(target="file:out"), validator("w", "file_content_match", "file:out")],
     [capture("out")], []),
    ("code-execution-without-checks",
     [validator(vtype="code_execution", target="file:src", expected_from=None, config=CODE)],
     [], [(f"{V}[0].target", 'references unknown post_execution_check key "src"')]),
    ("code-execution-unknown-check",
     [validator(vtype="code_execution", target="file:src", expected_from=None, config=CODE)],
     [capture("out")],
     [(f"{V}[0].target", 'references unknown post_execution_check key "src"')]),
    ("code-execution-needs-file-capture",
     [validator(vtype="code_execution", target="file:tree", expected_from=None, config=CODE)],
     [capture("tree", "directory_listing", "/work")],
     [(f"{V}[0].target", "must reference a file_capture post_execution_check")]),
    ("code-execution-on-file-capture",
     [validator(vtype="code_execution", target="file:src", expected_from=None, config=CODE)],
     [capture("src")], []),
    ("code-execution-needs-file-prefix",
     [validator(vtype="code_execution", target="final_output", expected_from=None,
                config=CODE)], [capture("src")],
     [(f"{V}[0].target", "must use file: prefix for file validators")]),
    ("postcondition-needs-a-check",
     [validator(vtype="postcondition", target="file:out", expected_from=None, config=POST)],
     [], [(f"{V}[0].target", "requires at least one post_execution_check")]),
    ("postcondition-with-check",
     [validator(vtype="postcondition", target="file:out", expected_from=None, config=POST)],
     [capture("out")], []),
    ("postcondition-expected-from-omitted",
     [validator(vtype="postcondition", target="file:out", config=POST)], [capture("out")],
     [(f"{V}[0].expected_from", "must be omitted for postcondition validators")]),
]

TOOL_CALLS = [
    ("target-must-be-tool-calls",
     [validator(vtype="tool_call_assertion", target="final_output", expected_from=None,
                config=TOOL)],
     [(f"{V}[0].target", 'must be "tool_calls"')]),
    ("target-required", [validator(vtype="tool_call_assertion", target="", expected_from=None,
                                   config=TOOL)],
     [(f"{V}[0].target", "is required")]),
    ("expected-from-must-be-omitted",
     [validator(vtype="tool_call_assertion", target="tool_calls", config=TOOL)],
     [(f"{V}[0].expected_from", "must be omitted for tool_call_assertion validators")]),
    ("config-required",
     [validator(vtype="tool_call_assertion", target="tool_calls", expected_from=None)],
     [(f"{V}[0].config", "tool_call_assertion config is required")]),
    ("valid", [validator(vtype="tool_call_assertion", target="tool_calls", expected_from=None,
                         config=TOOL)], []),
]

CONFIGS = [
    ("strict-unknown-key", validator(vtype="x_strict", config={"treshold": 0.5}),
     [(f"{V}[0].config", 'invalid JSON: json: unknown field "treshold"')]),
    ("strict-rules-get-config-path", validator(vtype="x_strict", config={"threshold": 2}),
     [(f"{V}[0].config.threshold", "must be between 0 and 1")]),
    ("strict-absent-config-uses-defaults", validator(vtype="x_strict"), []),
    ("lenient-config-required", validator(vtype="x_lenient_required"),
     [(f"{V}[0].config", "x_lenient_required config is required")]),
    ("lenient-unknown-keys-ignored",
     validator(vtype="x_lenient_required", config={"mode": "contains", "extra": [1]}), []),
    ("file-content-match-mode-typo-is-lenient",
     validator(vtype="file_content_match", target="file:out", config={"mode": "contains"}), []),
    ("ignored-config-never-read", validator(vtype="exact_match", config="not even an object"),
     []),
]

CHECKS = [
    ("key-blank", [capture(" ")], [("evaluation_spec.post_execution_checks[0].key",
                                    "is required")]),
    ("key-duplicate", [capture("a"), capture("a")],
     [("evaluation_spec.post_execution_checks[1].key", "must be unique")]),
    ("type-unknown", [capture(ctype="file")],
     [("evaluation_spec.post_execution_checks[0].type",
       "must be one of file_capture, directory_listing")]),
    ("path-blank", [capture(path="  ")],
     [("evaluation_spec.post_execution_checks[0].path", "is required")]),
    ("max-size-negative", [capture(max_size_bytes=-1)],
     [("evaluation_spec.post_execution_checks[0].max_size_bytes",
       "must be greater than or equal to 0")]),
    ("max-size-zero", [capture(max_size_bytes=0)], []),
    ("listing-recursive", [capture("tree", "directory_listing", "/w", recursive=True)], []),
]

M = "evaluation_spec.metrics"
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

B = "evaluation_spec.behavioral"
BEHAVIORAL = [
    ("no-signals", {"signals": []}, [(f"{B}.signals", "must contain at least one signal")]),
    ("signal-unknown", {"signals": [{"key": "speed", "weight": 1}]},
     [(f"{B}.signals[0].key", "is not a supported behavioral signal")]),
    ("signal-key-blank", {"signals": [{"key": "", "weight": 1}]},
     [(f"{B}.signals[0].key", "is required")]),
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
     [(f"{B}.signals[0].pass_threshold", "is required when gate is true")]),
    ("gate-threshold-out-of-range", {"signals": [{"key": "recovery_behavior", "weight": 1,
                                                  "gate": True, "pass_threshold": 1.5}]},
     [(f"{B}.signals[0].pass_threshold", "must be between 0 and 1")]),
    ("ungated-threshold-out-of-range", {"signals": [{"key": "exploration_efficiency",
                                                     "weight": 1, "pass_threshold": -0.1}]},
     [(f"{B}.signals[0].pass_threshold", "must be between 0 and 1")]),
    ("valid", {"signals": [{"key": "recovery_behavior", "weight": 2, "gate": True,
                            "pass_threshold": 0.5}, {"key": "error_cascade", "weight": 1}]}, []),
]

P = "evaluation_spec.pricing.models"
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

J = "evaluation_spec.llm_judges"
JUDGES = [
    ("duplicate-key", {"judge_mode": "hybrid", "llm_judges": [judge(), judge()]},
     [(f"{J}[1].key", "must be unique")]),
    ("collides-with-validator", {"judge_mode": "hybrid", "llm_judges": [judge("v")]},
     [(f"{J}[0].key", "collides with validator key")]),
    ("collides-with-metric", {"judge_mode": "llm_judge", "llm_judges": [judge("m")],
                              "metrics": [{"key": "m", "type": "numeric", "collector": "c"}]},
     [(f"{J}[0].key", "collides with metric key")]),
    ("deterministic-with-judges", {"judge_mode": "deterministic", "llm_judges": [judge()]},
     [(J, "must be empty when judge_mode is deterministic")]),
    ("llm-judge-without-judges", {"judge_mode": "llm_judge"},
     [(J, "must contain at least one judge when judge_mode is llm_judge")]),
    ("hybrid-without-judges", {"judge_mode": "hybrid"},
     [(J, "must contain at least one judge when judge_mode is hybrid")]),
    ("hybrid-with-judge", {"judge_mode": "hybrid", "llm_judges": [judge()]}, []),
]

METRIC = {"key": "m", "type": "numeric", "collector": "run_total_latency_ms"}
SIGNALS = {"signals": [{"key": "error_cascade", "weight": 1}]}
DIMENSIONS = [
    ("key-blank", [{"key": " ", "source": "validators"}], {}, [(f"{D}[0].key", "is required")]),
    ("key-duplicate", ["correctness", {"key": "correctness", "source": "validators"}], {},
     [(f"{D}[1].key", "must be unique")]),
    ("key-may-equal-validator-key", [{"key": "v", "source": "validators"}], {}, []),
    ("source-unknown", [{"key": "speed", "source": "speed"}], {}, [(f"{D}[0].source", SOURCES)]),
    ("string-form-custom-key", ["quality"], {}, [(f"{D}[0].source", SOURCES)]),
    ("human-preference-valid", [{"key": "human", "source": "human_preference"}], {}, []),
    ("validators-unknown-scope",
     [{"key": "correctness", "source": "validators", "validators": ["v", "w"]}], {},
     [(f"{D}[0].validators[1]", 'references unknown validator key "w"')]),
    ("validators-direction-lower",
     [{"key": "c", "source": "validators", "better_direction": "lower"}], {},
     [(f"{D}[0].better_direction", 'must be "higher" for validators source')]),
    ("reliability-direction-lower",
     [{"key": "r", "source": "reliability", "better_direction": "lower"}], {},
     [(f"{D}[0].better_direction", 'must be "higher" for reliability source')]),
    ("behavioral-direction-lower",
     [{"key": "b", "source": "behavioral", "better_direction": "lower"}],
     {"behavioral": SIGNALS},
     [(f"{D}[0].better_direction", 'must be "higher" for behavioral source')]),
    ("behavioral-without-block", ["behavioral"], {}, [(B, "is required")]),
    ("behavioral-with-block", ["behavioral"], {"behavioral": SIGNALS}, []),
    ("metric-key-missing",
     [{"key": "q", "source": "metric", "better_direction": "lower",
       "normalization": envelope()}], {"metrics": [METRIC]},
     [(f"{D}[0].metric", "is required when source is metric")]),
    ("metric-key-unknown",
     [{"key": "q", "source": "metric", "metric": "nope", "better_direction": "lower",
       "normalization": envelope()}], {"metrics": [METRIC]},
     [(f"{D}[0].metric", 'references unknown metric key "nope"')]),
    ("metric-without-normalization",
     [{"key": "q", "source": "metric", "metric": "m", "better_direction": "lower"}],
     {"metrics": [METRIC]},
     [(f"{D}[0].normalization", "is required when source is metric")]),
    ("metric-without-direction",
     [{"key": "q", "source": "metric", "metric": "m", "normalization": envelope()}],
     {"metrics": [METRIC]},
     [(f"{D}[0].better_direction", 'must be "higher" or "lower"')]),
    ("metric-valid-lower",
     [{"key": "q", "source": "metric", "metric": "m", "better_direction": "lower",
       "normalization": envelope()}], {"metrics": [METRIC]}, []),
    ("latency-object-without-normalization",
     [{"key": "speed", "source": "latency", "better_direction": "lower"}], {},
     [(f"{D}[0].normalization", "is required when source is latency")]),
    ("latency-string-without-legacy-block", ["latency"],
     {"runtime_limits": {"max_duration_ms": 60000}},
     [(f"{D}[0].normalization", "is required when source is latency")]),
    ("cost-object-without-normalization",
     [{"key": "spend", "source": "cost", "better_direction": "lower"}], {},
     [(f"{D}[0].normalization", "is required when source is cost")]),
    ("envelope-without-max",
     [{"key": "latency", "normalization": envelope(maximum=None)}], {},
     [(f"{D}[0].normalization.max", "is required")]),
    ("envelope-without-target",
     [{"key": "latency", "normalization": envelope(target=None)}], {},
     [(f"{D}[0].normalization.target", "is required")]),
    ("legacy-latency-without-max-or-fallback", ["latency"],
     {"scorecard": card("latency", normalization={"latency": {"target_ms": 100}})},
     [(f"{D}[0].normalization.max", "is required")]),
    ("lower-max-equal-target",
     [{"key": "cost", "normalization": envelope(0.5, 0.5)}], {},
     [(f"{D}[0].normalization.max",
       "must be greater than target when better_direction is lower")]),
    ("higher-max-above-target",
     [{"key": "q", "source": "metric", "metric": "m", "better_direction": "higher",
       "normalization": envelope(10, 20)}], {"metrics": [METRIC]},
     [(f"{D}[0].normalization.max",
       "must be less than target when better_direction is higher")]),
    ("higher-floor-below-target",
     [{"key": "q", "source": "metric", "metric": "m", "better_direction": "higher",
       "normalization": envelope(20, 10)}], {"metrics": [METRIC]}, []),
    ("latency-higher-allowed",
     [{"key": "latency", "better_direction": "higher", "source": "latency",
       "normalization": envelope(1000, 100)}], {}, []),
    ("llm-judge-without-judge-key", [{"key": "quality", "source": "llm_judge"}],
     {"judge_mode": "hybrid", "llm_judges": [judge()]},
     [(f"{D}[0].judge_key", "judge_key is required when source is llm_judge")]),
    ("llm-judge-unknown-judge-key",
     [{"key": "quality", "source": "llm_judge", "judge_key": "k"}],
     {"judge_mode": "hybrid", "llm_judges": [judge()]},
     [(f"{D}[0].judge_key", 'references unknown judge key "k"')]),
    ("llm-judge-direction-lower",
     [{"key": "quality", "source": "llm_judge", "judge_key": "j", "better_direction": "lower"}],
     {"judge_mode": "hybrid", "llm_judges": [judge()]},
     [(f"{D}[0].better_direction", 'must be "higher" for llm_judge source')]),
    ("llm-judge-dimension-may-share-judge-key",
     [{"key": "j", "source": "llm_judge", "judge_key": "j"}],
     {"judge_mode": "hybrid", "llm_judges": [judge()]}, []),
    ("judge-key-on-other-source",
     [{"key": "correctness", "source": "validators", "judge_key": "j"}],
     {"judge_mode": "hybrid", "llm_judges": [judge()]},
     [(f"{D}[0].judge_key", "must be empty unless source is llm_judge")]),
    ("weight-negative", [{"key": "correctness", "weight": -1}], {},
     [(f"{D}[0].weight", "must be greater than or equal to 0")]),
    ("weight-zero", [{"key": "correctness", "weight": 0}], {}, []),
    ("gate-without-threshold", [{"key": "correctness", "gate": True}], {},
     [(f"{D}[0].pass_threshold", "is required when gate is true")]),
    ("gate-threshold-above-one", [{"key": "correctness", "gate": True, "pass_threshold": 1.01}],
     {}, [(f"{D}[0].pass_threshold", "must be between 0 and 1")]),
    ("ungated-threshold-below-zero", [{"key": "correctness", "pass_threshold": -0.5}], {},
     [(f"{D}[0].pass_threshold", "must be between 0 and 1")]),
    ("gate-threshold-bounds", [{"key": "correctness", "gate": True, "pass_threshold": 0},
                               {"key": "c2", "source": "validators", "pass_threshold": 1}],
     {}, []),
]

S = "evaluation_spec.scorecard"
SCORECARD = [
    ("binary-dimension-needs-threshold", card("correctness", strategy="binary"),
     [(f"{D}[0].pass_threshold", "is required when gate is true")]),
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
     [(f"{S}.dimensions", "must contain at least one gate dimension for hybrid strategy")]),
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


def _ids(table: list[tuple[Any, ...]]) -> list[str]:
    return [row[0] for row in table]


@pytest.mark.parametrize(("case", "spec", "expected"), TOP_LEVEL, ids=_ids(TOP_LEVEL))
def test_top_level(case: str, spec: dict[str, Any], expected: list[Finding]) -> None:
    """Top-level rules: name, version_number, judge_mode, validators, dimensions, strategy."""
    assert findings(spec) == expected


@pytest.mark.parametrize(("case", "limits", "expected"), RUNTIME_LIMITS,
                         ids=_ids(RUNTIME_LIMITS))
def test_runtime_limits(case: str, limits: dict[str, Any], expected: list[Finding]) -> None:
    """Runtime limits must be positive when set; max_iterations lies in 1..1000."""
    assert findings(body(runtime_limits=limits)) == expected


@pytest.mark.parametrize(("case", "decls", "expected"), VALIDATORS, ids=_ids(VALIDATORS))
def test_validator_rules(case: str, decls: list[dict[str, Any]],
                         expected: list[Finding]) -> None:
    """Validator key, type, target and expected_from rules report their exact findings."""
    assert findings(body(validators=decls)) == expected


@pytest.mark.parametrize(("case", "decls", "checks", "expected"), FILE_VALIDATORS,
                         ids=_ids(FILE_VALIDATORS))
def test_file_targets(case: str, decls: list[dict[str, Any]], checks: list[dict[str, Any]],
                      expected: list[Finding]) -> None:
    """File validators need file: targets that cross-reference declared post-execution checks."""
    assert findings(body(validators=decls, post_execution_checks=checks)) == expected


@pytest.mark.parametrize(("case", "decls", "expected"), TOOL_CALLS, ids=_ids(TOOL_CALLS))
def test_tool_call_assertion_generic_rules(case: str, decls: list[dict[str, Any]],
                                           expected: list[Finding]) -> None:
    """tool_call_assertion targets exactly tool_calls, omits expected_from, needs a config."""
    assert findings(body(validators=decls)) == expected


@pytest.mark.parametrize(("case", "decl", "expected"), CONFIGS, ids=_ids(CONFIGS))
def test_config_handling(case: str, decl: dict[str, Any], expected: list[Finding]) -> None:
    """Configs: required check, strict decoding at ...config, config_rules, lenient, ignored."""
    checks = [capture("out")] if decl["target"].startswith("file:") else []
    assert findings(body(validators=[decl], post_execution_checks=checks)) == expected


def test_strict_config_error_names_unknown_field_for_registered_kind() -> None:
    """A registered strict kind reports an unknown config key at ...config, naming the key."""
    decl = validator(vtype="tool_call_assertion", target="tool_calls", expected_from=None,
                     config={**TOOL, "tool_nme": "search"})
    [(field, message)] = findings(body(validators=[decl]))
    assert field == f"{V}[0].config"
    assert "unknown field" in message and "tool_nme" in message


def test_strict_config_that_is_not_an_object_is_a_config_finding() -> None:
    """A strict config that does not decode as an object is reported as invalid JSON."""
    [(field, message)] = findings(body(validators=[validator(vtype="x_strict", config=[1])]))
    assert field == f"{V}[0].config"
    assert message.startswith("invalid JSON: ")


@pytest.mark.parametrize(("case", "checks", "expected"), CHECKS, ids=_ids(CHECKS))
def test_post_execution_checks(case: str, checks: list[dict[str, Any]],
                               expected: list[Finding]) -> None:
    """Post-execution checks: key required/unique, type, path, max_size_bytes ≥ 0."""
    assert findings(body(post_execution_checks=checks)) == expected


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


@pytest.mark.parametrize(("case", "dimensions", "fields", "expected"), DIMENSIONS,
                         ids=_ids(DIMENSIONS))
def test_dimensions(case: str, dimensions: list[Any], fields: dict[str, Any],
                    expected: list[Finding]) -> None:
    """Dimension rules per source, weight, gate and pass_threshold give exact findings."""
    spec = {**body(scorecard=card(*dimensions)), **fields}
    assert findings(spec) == expected


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
