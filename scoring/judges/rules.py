"""Load-time rules for LLM judges (docs/scoring.md §3 and its message catalogue).

AgentClash's ``validateLLMJudges`` (``validation_judges.go``), rule by rule and in its
order: key (blank, repeated, or taken by a validator or metric: not checked further), mode,
mode texts, ``model``/``models``, provider inference, samples, consensus, evidence
references, ``output_schema``, secret references, ``score_scale``, ``timeout_ms``; then
``scorecard.judge_limits``. ``judge_mode`` coherence is checked in
:mod:`scoring.spec.rules`, after the dimensions, as in AgentClash.
"""

from __future__ import annotations

from typing import Final

from ..compat.goquote import quote
from ..errors import FieldError
from ..record import references
from ..spec.models import Consensus, EvaluationSpec, JudgeDecl
from ..validators.schemas import SchemaProblem, schema_draft
from .providers import infer_provider

ROOT: Final = "evaluation_spec.llm_judges"
MODES: Final = ("rubric", "assertion", "n_wise", "reference")
AGGREGATIONS: Final = ("median", "mean", "majority_vote", "unanimous")
MAX_SAMPLES: Final = 10
#: The mode → (field holding the mode's text, mode name in the message).
MODE_TEXT: Final = {"rubric": "rubric", "reference": "rubric", "assertion": "assertion",
                    "n_wise": "prompt"}
SECRET_NEEDLES: Final = ("${secrets.", "${ secrets.", "${secrets .")
SECRET_MESSAGE: Final = ("must not contain ${secrets.*} references; secrets are not allowed in "
                         "judge prompt text")
UNKNOWN_PROVIDER: Final = ("must be inferable to a known judge provider (claude-*, gpt-*, "
                           "gemini-*, grok-*, mistral-*, openrouter/* slugs)")
SUPPORTED_REFERENCE: Final = "must be a supported evidence reference"


def judge_rules(spec: EvaluationSpec, validator_keys: set[str], metric_keys: set[str],
                out: list[FieldError]) -> dict[str, str]:
    """``validateLLMJudges``: every judge's findings, then ``scorecard.judge_limits``.

    A judge whose key is blank, repeated or taken by a validator or metric is not checked
    further; neither is one with an unknown mode. Returns the usable judges' modes by key.
    """
    modes: dict[str, str] = {}
    for index, judge in enumerate(spec.llm_judges):
        path = f"{ROOT}[{index}]"
        problem = _key_problem(judge.key, modes, validator_keys, metric_keys)
        if problem:
            out.append(FieldError(f"{path}.key", problem))
            continue
        modes[judge.key] = judge.mode
        out.extend(check_judge(judge, path))
    out.extend(_limits(spec))
    return modes


def _key_problem(key: str, judges: dict[str, str], validator_keys: set[str],
                 metric_keys: set[str]) -> str:
    if not key:
        return "is required"
    if key in judges:
        return "must be unique"
    if key in validator_keys:
        return f"collides with validator key {quote(key)}"
    if key in metric_keys:
        return f"collides with metric key {quote(key)}"
    return ""


def _limits(spec: EvaluationSpec) -> list[FieldError]:
    limits, path = spec.scorecard.judge_limits, "evaluation_spec.scorecard.judge_limits"
    if limits is None:
        return []
    found = []
    if not 0 <= (limits.max_samples_per_judge or 0) <= MAX_SAMPLES:
        found.append(FieldError(f"{path}.max_samples_per_judge",
                                f"must be between 0 and {MAX_SAMPLES}"))
    if (limits.max_calls_usd or 0) < 0:
        found.append(FieldError(f"{path}.max_calls_usd", "must be greater than or equal to 0"))
    if (limits.max_tokens or 0) < 0:
        found.append(FieldError(f"{path}.max_tokens", "must be greater than or equal to 0"))
    return found


def check_judge(judge: JudgeDecl, path: str) -> list[FieldError]:
    """The findings of one judge declaration at ``path`` (``...llm_judges[i]``)."""
    if judge.mode not in MODES:
        return [FieldError(f"{path}.mode", "must be one of " + ", ".join(MODES))]
    return [*_mode_text(judge, path), *_models(judge, path), *_samples(judge, path),
            *_consensus(judge, path), *_context(judge, path), *_output_schema(judge, path),
            *_secrets(judge, path), *_scale_and_timeout(judge, path)]


def _mode_text(judge: JudgeDecl, path: str) -> list[FieldError]:
    name = MODE_TEXT[judge.mode]
    found = []
    if not getattr(judge, name).strip():
        found.append(FieldError(f"{path}.{name}", f"is required for {judge.mode} mode"))
    if judge.mode == "reference":
        if not judge.reference_from:
            found.append(FieldError(f"{path}.reference_from", "is required for reference mode"))
        elif not references.is_supported(judge.reference_from):
            found.append(FieldError(f"{path}.reference_from", SUPPORTED_REFERENCE))
    return found


def _models(judge: JudgeDecl, path: str) -> list[FieldError]:
    if not judge.model and not judge.models:
        return [FieldError(f"{path}.model", "must set exactly one of model or models")]
    if judge.model and judge.models:
        return [FieldError(f"{path}.models", "must set exactly one of model or models, not both")]
    if judge.model:
        return _provider(judge.model, f"{path}.model")
    found: list[FieldError] = []
    for j, model in enumerate(judge.models):
        field = f"{path}.models[{j}]"
        found += _provider(model, field) if model else [
            FieldError(field, "must be a non-empty model identifier")]
    return found


def _provider(model: str, field: str) -> list[FieldError]:
    return [] if infer_provider(model) else [FieldError(field, UNKNOWN_PROVIDER)]


def _samples(judge: JudgeDecl, path: str) -> list[FieldError]:
    if judge.samples < 0:
        return [FieldError(f"{path}.samples", "must be greater than or equal to 0")]
    if judge.samples > MAX_SAMPLES:
        return [FieldError(f"{path}.samples", f"must be at most {MAX_SAMPLES}")]
    return []


def _consensus(judge: JudgeDecl, path: str) -> list[FieldError]:
    field = f"{path}.consensus"
    if len(judge.models) <= 1:
        return [] if judge.consensus is None else [
            FieldError(field, "is only valid when multiple models are declared")]
    if judge.consensus is None:
        return [FieldError(field, "is required when multiple models are declared")]
    return consensus_findings(judge.mode, judge.consensus, field)


def consensus_findings(mode: str, consensus: Consensus, field: str) -> list[FieldError]:
    """Whether the aggregation fits the mode's output shape and the threshold is in [0, 1]."""
    aggregation = consensus.aggregation
    if aggregation not in AGGREGATIONS:
        return [FieldError(f"{field}.aggregation", "must be one of " + ", ".join(AGGREGATIONS))]
    found = []
    if aggregation in ("median", "mean") and mode == "assertion":
        found.append(FieldError(f"{field}.aggregation", f"{quote(aggregation)} aggregation is "
                                "only valid for numeric modes (rubric, reference, n_wise)"))
    if aggregation == "majority_vote" and mode != "assertion":
        found.append(FieldError(f"{field}.aggregation",
                                "majority_vote aggregation is only valid for assertion mode"))
    threshold = consensus.min_agreement_threshold
    if threshold is not None and not 0 <= threshold <= 1:
        found.append(FieldError(f"{field}.min_agreement_threshold", "must be between 0 and 1"))
    return found


def _context(judge: JudgeDecl, path: str) -> list[FieldError]:
    return [FieldError(f"{path}.context_from[{j}]", SUPPORTED_REFERENCE)
            for j, ref in enumerate(judge.context_from) if not references.is_supported(ref)]


def _output_schema(judge: JudgeDecl, path: str) -> list[FieldError]:
    """``parseJSONSchema``: the schema decodes and names a supported draft (AgentClash does
    not check it against the meta-schema at load time)."""
    if "output_schema" not in judge.model_fields_set:
        return []
    try:
        schema_draft(judge.output_schema)
    except SchemaProblem as problem:
        return [FieldError(f"{path}.output_schema", f"must be valid JSON Schema: {problem}")]
    return []


def has_secret_reference(text: str) -> bool:
    """Whether ``text`` holds a ``${secrets.`` template reference (spaced forms too)."""
    return "${" in text and any(needle in text for needle in SECRET_NEEDLES)


def _secrets(judge: JudgeDecl, path: str) -> list[FieldError]:
    return [FieldError(f"{path}.{name}", SECRET_MESSAGE)
            for name in ("rubric", "assertion", "prompt")
            if has_secret_reference(getattr(judge, name))]


def _scale_and_timeout(judge: JudgeDecl, path: str) -> list[FieldError]:
    found = []
    scale = judge.score_scale
    if scale is not None and scale.min >= scale.max:
        found.append(FieldError(f"{path}.score_scale", "min must be strictly less than max"))
    if judge.timeout_ms is not None and judge.timeout_ms <= 0:
        found.append(FieldError(f"{path}.timeout_ms", "must be greater than 0"))
    return found
