"""The LLM-judge rules of docs/scoring.md §3: every rule, its field path and message."""

from __future__ import annotations

from typing import Any

import pytest

from evalfleet import scoring
from evalfleet.scoring.judges.rules import has_secret_reference
from evalfleet.scoring.spec.rules import validate_spec

UNKNOWN = ("must be inferable to a known judge provider (claude-*, gpt-*, gemini-*, grok-*, "
           "mistral-*, openrouter/* slugs)")
SECRETS = ("must not contain ${secrets.*} references; secrets are not allowed in judge prompt "
           "text")
J = "evaluation_spec.llm_judges[0]"


def spec(*judges: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """A valid hybrid spec around ``judges``."""
    return {"name": "s", "version_number": 1, "judge_mode": "hybrid",
            "validators": [{"key": "v", "type": "contains", "target": "final_output",
                            "expected_from": "literal:x"}],
            "llm_judges": list(judges),
            "scorecard": {"dimensions": ["correctness"]}, **extra}


def judge(**extra: Any) -> dict[str, Any]:
    return {"key": "j", "mode": "rubric", "rubric": "Is it good?", "model": "claude-x", **extra}


def findings(body: dict[str, Any]) -> list[tuple[str, str]]:
    loaded = scoring.spec.models.EvaluationSpec.model_validate(body)
    return [(f.field, f.message) for f in validate_spec(loaded)]


CASES = [
    ("valid-rubric", judge(), []),
    ("mode-unknown", judge(mode="pairwise"),
     [(f"{J}.mode", "must be one of rubric, assertion, n_wise, reference")]),
    ("rubric-text", judge(rubric=" "), [(f"{J}.rubric", "is required for rubric mode")]),
    ("reference-texts", judge(mode="reference", rubric=""),
     [(f"{J}.rubric", "is required for reference mode"),
      (f"{J}.reference_from", "is required for reference mode")]),
    ("reference-from-bad", judge(mode="reference", reference_from="nope"),
     [(f"{J}.reference_from", "must be a supported evidence reference")]),
    ("reference-ok", judge(mode="reference", reference_from="case.expectations.answer"), []),
    ("assertion-text", judge(mode="assertion"),
     [(f"{J}.assertion", "is required for assertion mode")]),
    ("n-wise-text", judge(mode="n_wise"), [(f"{J}.prompt", "is required for n_wise mode")]),
    ("no-model", judge(model=""), [(f"{J}.model", "must set exactly one of model or models")]),
    ("both-models", judge(models=["gpt-4o"]),
     [(f"{J}.models", "must set exactly one of model or models, not both")]),
    ("blank-model-entry", judge(model="", models=[" "]),
     [(f"{J}.models[0]", "must be a non-empty model identifier")]),
    ("unknown-provider", judge(model="llama-3"),
     [(f"{J}.model", UNKNOWN)]),
    ("unknown-provider-in-list", judge(model="", models=["gpt-4o", "llama"],
                                       consensus={"aggregation": "mean"}),
     [(f"{J}.models[1]", UNKNOWN)]),
    ("samples-ten", judge(samples=10), []),
    ("samples-eleven", judge(samples=11), [(f"{J}.samples", "must be at most 10")]),
    ("samples-negative", judge(samples=-1),
     [(f"{J}.samples", "must be greater than or equal to 0")]),
    ("consensus-missing", judge(model="", models=["gpt-4o", "claude-x"]),
     [(f"{J}.consensus", "is required when multiple models are declared")]),
    ("consensus-single-model", judge(consensus={"aggregation": "mean"}),
     [(f"{J}.consensus", "is only valid when multiple models are declared")]),
    ("consensus-unknown", judge(model="", models=["gpt-4o", "claude-x"],
                                consensus={"aggregation": "vote"}),
     [(f"{J}.consensus.aggregation", "must be one of median, mean, majority_vote, unanimous")]),
    ("majority-numeric", judge(model="", models=["gpt-4o", "claude-x"],
                               consensus={"aggregation": "majority_vote"}),
     [(f"{J}.consensus.aggregation",
       "majority_vote aggregation is only valid for assertion mode")]),
    ("median-assertion", judge(mode="assertion", assertion="a", model="",
                               models=["gpt-4o", "claude-x"], consensus={"aggregation": "median"}),
     [(f"{J}.consensus.aggregation",
       '"median" aggregation is only valid for numeric modes (rubric, reference, n_wise)')]),
    ("mean-assertion", judge(mode="assertion", assertion="a", model="",
                             models=["gpt-4o", "claude-x"], consensus={"aggregation": "mean"}),
     [(f"{J}.consensus.aggregation",
       '"mean" aggregation is only valid for numeric modes (rubric, reference, n_wise)')]),
    ("unanimous-both", judge(mode="assertion", assertion="a", model="",
                             models=["gpt-4o", "claude-x"], consensus={"aggregation": "unanimous"}),
     []),
    ("majority-assertion", judge(mode="assertion", assertion="a", model="",
                                 models=["gpt-4o", "claude-x"],
                                 consensus={"aggregation": "majority_vote"}), []),
    ("agreement-range", judge(model="", models=["gpt-4o", "claude-x"],
                              consensus={"aggregation": "median",
                                         "min_agreement_threshold": 1.5}),
     [(f"{J}.consensus.min_agreement_threshold", "must be between 0 and 1")]),
    ("context-bad", judge(context_from=["final_output", "nope"]),
     [(f"{J}.context_from[1]", "must be a supported evidence reference")]),
    ("schema-draft", judge(output_schema={"$schema": "http://json-schema.org/draft-04/schema#"}),
     [(f"{J}.output_schema", 'must be valid JSON Schema: unsupported JSON schema draft '
                             '"http://json-schema.org/draft-04/schema#"')]),
    ("schema-draft-07", judge(output_schema={"$schema": "http://json-schema.org/draft-07/schema#",
                                             "type": "object"}), []),
    ("schema-2020", judge(output_schema={"type": "object"}), []),
    ("schema-nested-decode", judge(output_schema={"properties": {"a": {"minimum": "x"}}}),
     [(f"{J}.output_schema", "must be valid JSON Schema: json: cannot unmarshal string into "
                             "Go struct field .schemaWithoutMethods.properties."
                             "schemaWithoutMethods.minimum of type float64")]),
    ("schema-unresolvable-ok", judge(output_schema={"$ref": "elsewhere.json"}), []),
    ("secrets-rubric", judge(rubric="use ${secrets.KEY}"),
     [(f"{J}.rubric", SECRETS)]),
    ("secrets-spaced", judge(mode="assertion", assertion="${ secrets.K}"),
     [(f"{J}.assertion", SECRETS)]),
    ("secrets-prompt", judge(mode="n_wise", prompt="${secrets .K}"),
     [(f"{J}.prompt", SECRETS)]),
    ("scale-equal", judge(score_scale={"min": 3, "max": 3}),
     [(f"{J}.score_scale", "min must be strictly less than max")]),
    ("scale-empty", judge(score_scale={}),  # Go's zero bounds: 0 and 0
     [(f"{J}.score_scale", "min must be strictly less than max")]),
    ("scale-min-only", judge(score_scale={"min": 1}),
     [(f"{J}.score_scale", "min must be strictly less than max")]),
    ("timeout-zero", judge(timeout_ms=0), [(f"{J}.timeout_ms", "must be greater than 0")]),
]


@pytest.mark.parametrize(("body", "expected"), [pytest.param(b, e, id=i) for i, b, e in CASES])
def test_judge_rule(body: dict[str, Any], expected: list[tuple[str, str]]) -> None:
    """Each judge rule yields exactly its finding (and a valid judge none)."""
    assert expected == findings(spec(body))


def test_colliding_judge_is_not_checked_further() -> None:
    """A judge whose key collides reports the collision only (AgentClash skips the rest)."""
    assert [(f"{J}.key", 'collides with validator key "v"')] == findings(
        spec(judge(key="v", mode="bogus")))


def test_judge_limits_rules_still_apply() -> None:
    """judge_limits ranges come from the scorecard rules."""
    body = spec(judge())
    body["scorecard"]["judge_limits"] = {"max_samples_per_judge": 11, "max_calls_usd": -1}
    assert findings(body) == [
        ("evaluation_spec.scorecard.judge_limits.max_samples_per_judge",
         "must be between 0 and 10"),
        ("evaluation_spec.scorecard.judge_limits.max_calls_usd",
         "must be greater than or equal to 0")]


@pytest.mark.parametrize(("model", "provider"), [
    ("claude-3-5-haiku", "anthropic"), ("GPT-4o", "openai"), ("o1-mini", "openai"),
    ("o3", "openai"), ("o4-mini", "openai"), ("text-embedding-3", "openai"),
    ("gemini-2.0", "gemini"), ("grok-2", "xai"), ("mistral-large", "mistral"),
    ("meta/llama-3", "openrouter"), ("llama-3", ""),
])
def test_provider_by_prefix(model: str, provider: str) -> None:
    """The §3 prefix table, lower-cased."""
    from evalfleet.scoring.judges.providers import infer_provider

    assert provider == infer_provider(model)


@pytest.mark.parametrize(("text", "found"), [
    ("${secrets.A}", True), ("${ secrets.A}", True), ("${secrets .A}", True),
    ("$secrets.A", False), ("${secret.A}", False), ("plain", False)])
def test_secret_reference(text: str, found: bool) -> None:
    """``${secrets.`` and its two spaced variants are secret references."""
    assert found == has_secret_reference(text)
