"""Spec normalization on the way in (docs/scoring.md §2.2).

Trimming of the listed fields, the default strategy, the judge samples default, string-form
dimensions and the built-in expansion (with legacy normalization blocks), and the default
``better_direction``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from evalfleet.scoring.spec.models import Dimension, Envelope, EvaluationSpec


def spec(**fields: Any) -> EvaluationSpec:
    """A normalized spec from a minimal mapping with ``fields`` replacing top-level fields."""
    body: dict[str, Any] = {
        "name": "spec", "version_number": 1, "judge_mode": "deterministic",
        "validators": [{"key": "v", "type": "contains", "target": "final_output",
                        "expected_from": "literal:x"}],
        "scorecard": {"dimensions": ["correctness"]},
    }
    body.update(fields)
    return EvaluationSpec.model_validate(body)


def dimension(*dimensions: Any, **fields: Any) -> Dimension:
    """The first dimension of a spec whose scorecard has ``dimensions`` (+ scorecard fields)."""
    scorecard = {"dimensions": list(dimensions), **fields.pop("scorecard", {})}
    return spec(scorecard=scorecard, **fields).scorecard.dimensions[0]


Getter = Callable[[EvaluationSpec], Any]
PAD = "  \t"

TRIMMED: list[tuple[str, dict[str, Any], Getter, Any]] = [
    ("spec-name", {"name": f"{PAD}name\n"}, lambda s: s.name, "name"),
    ("validator-key", {"validators": [{"key": " v ", "type": "contains",
                                       "target": "final_output", "expected_from": "literal:x"}]},
     lambda s: s.validators[0].key, "v"),
    ("validator-target", {"validators": [{"key": "v", "type": "contains",
                                          "target": f"{PAD}final_output ",
                                          "expected_from": "literal:x"}]},
     lambda s: s.validators[0].target, "final_output"),
    ("expected-from-trailing-space-lost",
     {"validators": [{"key": "v", "type": "contains", "target": "final_output",
                      "expected_from": "literal:foo "}]},
     lambda s: s.validators[0].expected_from, "literal:foo"),
    ("expected-from-space-after-colon-kept",
     {"validators": [{"key": "v", "type": "contains", "target": "final_output",
                      "expected_from": " literal: foo"}]},
     lambda s: s.validators[0].expected_from, "literal: foo"),
    ("check-key-and-path", {"post_execution_checks": [{"key": " out ", "type": "file_capture",
                                                       "path": " /work/out.txt\n"}]},
     lambda s: (s.post_execution_checks[0].key, s.post_execution_checks[0].path),
     ("out", "/work/out.txt")),
    ("metric-key-collector-unit", {"metrics": [{"key": " m", "type": "numeric",
                                                "collector": "run_total_latency_ms ",
                                                "unit": " ms "}]},
     lambda s: (s.metrics[0].key, s.metrics[0].collector, s.metrics[0].unit),
     ("m", "run_total_latency_ms", "ms")),
    ("pricing-ids", {"pricing": {"models": [{"provider_key": " openai ",
                                             "provider_model_id": "\tgpt-4o "}]}},
     lambda s: (s.pricing.models[0].provider_key, s.pricing.models[0].provider_model_id)
     if s.pricing else None,
     ("openai", "gpt-4o")),
    ("dimension-key-metric-judge-key",
     {"scorecard": {"dimensions": [{"key": " q ", "source": "metric", "metric": " m ",
                                    "judge_key": " j "}]}},
     lambda s: (s.scorecard.dimensions[0].key, s.scorecard.dimensions[0].metric,
                s.scorecard.dimensions[0].judge_key),
     ("q", "m", "j")),
    ("behavioral-signal-key", {"behavioral": {"signals": [{"key": " error_cascade ",
                                                           "weight": 1}]}},
     lambda s: s.behavioral.signals[0].key if s.behavioral else None, "error_cascade"),
    ("judge-key-model-reference-models",
     {"llm_judges": [{"key": " j ", "model": " claude-x ", "reference_from": " final_output ",
                      "models": [" gpt-4o ", "claude-y\n"]}]},
     lambda s: (s.llm_judges[0].key, s.llm_judges[0].model, s.llm_judges[0].reference_from,
                s.llm_judges[0].models),
     ("j", "claude-x", "final_output", ["gpt-4o", "claude-y"])),
]

NOT_TRIMMED: list[tuple[str, dict[str, Any], Getter, Any]] = [
    ("validator-type", {"validators": [{"key": "v", "type": " contains",
                                        "target": "final_output", "expected_from": "literal:x"}]},
     lambda s: s.validators[0].type, " contains"),
    ("judge-rubric", {"llm_judges": [{"key": "j", "rubric": " Be fair. "}]},
     lambda s: s.llm_judges[0].rubric, " Be fair. "),
    ("dimension-source", {"scorecard": {"dimensions": [{"key": "c", "source": " validators"}]}},
     lambda s: s.scorecard.dimensions[0].source, " validators"),
    ("strategy", {"scorecard": {"dimensions": ["correctness"], "strategy": " binary "}},
     lambda s: s.scorecard.strategy, " binary "),
]


@pytest.mark.parametrize(("case", "fields", "get", "expected"), TRIMMED,
                         ids=[row[0] for row in TRIMMED])
def test_listed_fields_are_trimmed(case: str, fields: dict[str, Any], get: Getter,
                                   expected: Any) -> None:
    """Every field §2.2 lists loses surrounding whitespace."""
    assert get(spec(**fields)) == expected


@pytest.mark.parametrize(("case", "fields", "get", "expected"), NOT_TRIMMED,
                         ids=[row[0] for row in NOT_TRIMMED])
def test_other_fields_keep_whitespace(case: str, fields: dict[str, Any], get: Getter,
                                      expected: Any) -> None:
    """Fields §2.2 does not list are left exactly as written."""
    assert get(spec(**fields)) == expected


@pytest.mark.parametrize(("scorecard", "expected"), [
    ({"dimensions": ["correctness"]}, "weighted"),
    ({"dimensions": ["correctness"], "strategy": ""}, "weighted"),
    ({"dimensions": ["correctness"], "strategy": "binary"}, "binary"),
    ({"dimensions": ["correctness"], "strategy": "hybrid"}, "hybrid"),
], ids=["absent", "empty", "binary", "hybrid"])
def test_strategy_defaults_to_weighted(scorecard: dict[str, Any], expected: str) -> None:
    """An absent or empty scorecard.strategy becomes weighted; others are kept."""
    assert spec(scorecard=scorecard).scorecard.strategy == expected


def test_strategy_defaults_to_weighted_without_scorecard() -> None:
    """A spec with no scorecard block still gets the weighted strategy."""
    body = {"name": "s", "version_number": 1, "judge_mode": "deterministic"}
    assert EvaluationSpec.model_validate(body).scorecard.strategy == "weighted"


@pytest.mark.parametrize(("judge", "expected"), [
    ({"key": "j"}, 3),
    ({"key": "j", "samples": 0}, 3),
    ({"key": "j", "samples": 1}, 1),
    ({"key": "j", "samples": 10}, 10),
    ({"key": "j", "samples": 11}, 11),
], ids=["absent", "zero", "one", "ten", "eleven-left-for-validation"])
def test_judge_samples_default(judge: dict[str, Any], expected: int) -> None:
    """Judge samples 0 (or absent) becomes 3; any other value is kept."""
    assert spec(llm_judges=[judge]).llm_judges[0].samples == expected


BUILTINS = [
    ("correctness", "validators", "higher"),
    ("reliability", "reliability", "higher"),
    ("latency", "latency", "lower"),
    ("cost", "cost", "lower"),
    ("behavioral", "behavioral", "higher"),
]


@pytest.mark.parametrize(("key", "source", "direction"), BUILTINS,
                         ids=[row[0] for row in BUILTINS])
def test_string_form_builtin_expansion(key: str, source: str, direction: str) -> None:
    """A string-form built-in dimension gets its source and direction."""
    found = dimension(key)
    assert (found.key, found.source, found.better_direction) == (key, source, direction)
    assert found.validators == [] and found.normalization is None


@pytest.mark.parametrize(("key", "source", "direction"), BUILTINS,
                         ids=[row[0] for row in BUILTINS])
def test_object_form_without_source_expands_the_same(key: str, source: str,
                                                     direction: str) -> None:
    """An object-form ``{key: <built-in>}`` with no source is expanded like the string form."""
    found = dimension({"key": key, "weight": 2})
    assert (found.source, found.better_direction, found.weight) == (source, direction, 2)


def test_string_form_key_is_trimmed_before_expansion() -> None:
    """A padded string-form built-in key is trimmed and still expanded."""
    found = dimension(" latency ")
    assert (found.key, found.source) == ("latency", "latency")


@pytest.mark.parametrize("form", ["quality", {"key": "quality"}], ids=["string", "object"])
def test_unknown_key_without_source_stays_sourceless(form: Any) -> None:
    """A non-built-in key with no source keeps an empty source and direction."""
    found = dimension(form)
    assert (found.key, found.source, found.better_direction) == ("quality", "", "")


def test_expansion_only_when_source_is_empty() -> None:
    """A built-in key with an explicit source is not expanded."""
    found = dimension({"key": "latency", "source": "metric", "metric": "m"})
    assert (found.source, found.better_direction, found.normalization) == ("metric", "", None)


LEGACY: list[tuple[str, str, dict[str, Any], dict[str, Any], Envelope | None]] = [
    ("latency-target-and-max", "latency", {"latency": {"target_ms": 500, "max_ms": 5000}},
     {"max_duration_ms": 60000}, Envelope(target=500, max=5000)),
    ("latency-max-falls-back-to-max-duration", "latency", {"latency": {"target_ms": 500}},
     {"max_duration_ms": 60000}, Envelope(target=500, max=60000)),
    ("latency-no-max-no-fallback", "latency", {"latency": {"target_ms": 500}}, {},
     Envelope(target=500, max=None)),
    ("latency-empty-legacy-block", "latency", {"latency": {}}, {"max_duration_ms": 9000},
     Envelope(target=None, max=9000)),
    ("latency-no-legacy-block-no-fallback", "latency", {}, {"max_duration_ms": 60000}, None),
    ("latency-cost-block-only", "latency", {"cost": {"target_usd": 0.1}},
     {"max_duration_ms": 60000}, None),
    ("cost-target-and-max", "cost", {"cost": {"target_usd": 0.05, "max_usd": 1.5}},
     {"max_cost_usd": 10}, Envelope(target=0.05, max=1.5)),
    ("cost-max-falls-back-to-max-cost", "cost", {"cost": {"target_usd": 0.05}},
     {"max_cost_usd": 2.5}, Envelope(target=0.05, max=2.5)),
    ("cost-no-legacy-block-no-fallback", "cost", {}, {"max_cost_usd": 2.5}, None),
]


@pytest.mark.parametrize(("case", "key", "legacy", "limits", "expected"), LEGACY,
                         ids=[row[0] for row in LEGACY])
def test_legacy_normalization_blocks(case: str, key: str, legacy: dict[str, Any],
                                     limits: dict[str, Any], expected: Envelope | None) -> None:
    """Legacy latency/cost blocks become the envelope; max falls back to runtime limits."""
    scorecard = {"normalization": legacy} if legacy else {}
    found = dimension(key, scorecard=scorecard, runtime_limits=limits)
    assert found.normalization == expected


def test_legacy_block_is_also_used_by_object_form() -> None:
    """An object-form ``{key: cost}`` without source takes the legacy cost envelope."""
    found = dimension({"key": "cost"},
                      scorecard={"normalization": {"cost": {"target_usd": 0, "max_usd": 1}}})
    assert found.normalization == Envelope(target=0, max=1)


def test_explicit_normalization_wins_over_legacy_block() -> None:
    """A built-in dimension's own normalization is not replaced by the legacy block."""
    legacy = {"latency": {"target_ms": 1, "max_ms": 2}}
    found = dimension({"key": "latency", "normalization": {"target": 100, "max": 900}},
                      scorecard={"normalization": legacy})
    assert found.normalization == Envelope(target=100, max=900)


def test_legacy_fallback_reads_runtime_limits_as_floats() -> None:
    """The max_duration_ms fallback is stored as a float like every envelope bound."""
    found = dimension("latency", scorecard={"normalization": {"latency": {"target_ms": 1}}},
                      runtime_limits={"max_duration_ms": 7})
    assert found.normalization is not None
    assert isinstance(found.normalization.max, float)


DIRECTIONS = [
    ("validators", "higher"), ("reliability", "higher"), ("behavioral", "higher"),
    ("llm_judge", "higher"), ("metric", ""), ("latency", ""), ("cost", ""),
    ("human_preference", ""),
]


@pytest.mark.parametrize(("source", "expected"), DIRECTIONS, ids=[s for s, _ in DIRECTIONS])
def test_default_better_direction(source: str, expected: str) -> None:
    """An empty better_direction defaults to higher only for the four quality sources."""
    assert dimension({"key": "d", "source": source}).better_direction == expected


@pytest.mark.parametrize("source", ["validators", "metric", "latency", "human_preference"])
def test_explicit_better_direction_is_kept(source: str) -> None:
    """An explicit better_direction on a sourced dimension is never overwritten."""
    assert dimension({"key": "d", "source": source,
                      "better_direction": "lower"}).better_direction == "lower"


def test_builtin_expansion_sets_the_direction() -> None:
    """Expanding a source-less built-in sets its direction, as AgentClash's expansion does."""
    assert dimension({"key": "latency", "better_direction": "higher"}).better_direction == "lower"
