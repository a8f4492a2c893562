"""The evaluation spec as pydantic models, decoded strictly and normalized on the way in.

Field names and nesting follow AgentClash's ``evaluation_spec`` exactly. Every model
forbids unknown fields (AgentClash decodes the spec strictly); validator ``config`` and
judge ``output_schema`` stay raw JSON, because their strictness depends on the validator
type (see :mod:`scoring.validators`). Construction applies AgentClash's normalization
(docs/scoring.md §2.2): trimming, default strategy, string-form dimensions and their
built-in expansion, default ``better_direction``.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from .. import layer_sources
from ..compat.godecode import Int32, Int64
from ..compat.textnorm import trim
from .superset import ClawdiatorsBlock, EfficiencyConfig, SpeedConfig

JUDGE_DEFAULT_SAMPLES = 3
HIGHER_BY_DEFAULT = frozenset({"validators", "reliability", "behavioral", "llm_judge"})
"""Sources whose direction defaults to "higher"; so do every registered layer's sources."""


def _trim(value: str) -> str:
    return trim(value)  # Go's strings.TrimSpace


class Strict(BaseModel):
    """Base of every spec model: unknown fields are errors, no type coercion."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=False)


class RuntimeLimits(Strict):
    max_total_tokens: Int64 | None = None
    max_cost_usd: float | None = None
    max_duration_ms: Int64 | None = None
    max_iterations: Int32 | None = None


class ValidatorDecl(Strict):
    key: str = ""
    type: str = ""
    target: str = ""
    expected_from: str = ""
    config: Any = None
    """Raw JSON; decoded per type (strict, lenient or ignored) by the validator kind."""

    _trimmed = field_validator("key", "target", "expected_from")(_trim)


class MetricDecl(Strict):
    key: str = ""
    type: str = ""
    collector: str = ""
    unit: str = ""

    _trimmed = field_validator("key", "collector", "unit")(_trim)


class PriceRow(Strict):
    provider_key: str = ""
    provider_model_id: str = ""
    input_cost_per_million_tokens: float = 0.0
    output_cost_per_million_tokens: float = 0.0

    _trimmed = field_validator("provider_key", "provider_model_id")(_trim)


class Pricing(Strict):
    models: list[PriceRow] = Field(default_factory=list)


class BehavioralSignal(Strict):
    key: str = ""
    weight: float = 0.0
    gate: bool = False
    pass_threshold: float | None = None

    _trimmed = field_validator("key")(_trim)


class Behavioral(Strict):
    signals: list[BehavioralSignal] = Field(default_factory=list)


class PostExecutionCheck(Strict):
    key: str = ""
    type: str = ""
    path: str = ""
    recursive: bool = False
    max_size_bytes: Int64 | None = None

    _trimmed = field_validator("key", "path")(_trim)


class Consensus(Strict):
    aggregation: str = ""
    min_agreement_threshold: float | None = None
    flag_on_disagreement: bool = False
    """Accepted and, as in AgentClash's judge workflow, never read."""


class ScoreScale(Strict):
    """A judge's score range. A bound left out is Go's zero, 0 (the 1..5 default applies
    only when the whole ``score_scale`` is absent)."""

    min: float = 0.0
    max: float = 0.0


class JudgeDecl(Strict):
    key: str = ""
    mode: str = ""
    model: str = ""
    models: list[str] = Field(default_factory=list)
    samples: Int64 = Field(default=0, validate_default=True)
    consensus: Consensus | None = None
    context_from: list[str] = Field(default_factory=list)
    output_schema: Any = None
    rubric: str = ""
    assertion: str = ""
    expect: bool | None = None
    prompt: str = ""
    reference_from: str = ""
    score_scale: ScoreScale | None = None
    timeout_ms: Int64 | None = None
    position_debiasing: bool = False
    anti_gaming_clauses: list[str] = Field(default_factory=list)
    """Extra anti-gaming text appended to the judge prompt (AgentClash's field)."""

    _trimmed = field_validator("key", "model", "reference_from")(_trim)

    @field_validator("models")
    @classmethod
    def _trim_models(cls, models: list[str]) -> list[str]:
        return [m.strip() for m in models]

    @field_validator("samples")
    @classmethod
    def _default_samples(cls, samples: int) -> int:
        return samples or JUDGE_DEFAULT_SAMPLES


class Envelope(Strict):
    """A normalization envelope: ``target`` scores 1, ``max`` (the floor when higher) 0."""

    target: float | None = None
    max: float | None = None


class Dimension(Strict):
    key: str = ""
    source: str = ""
    validators: list[str] = Field(default_factory=list)
    metric: str = ""
    judge_key: str = ""
    normalization: Envelope | None = None
    better_direction: str = ""
    weight: float | None = None
    gate: bool = False
    pass_threshold: float | None = None
    score_key: str = ""
    """Clawdiators layer, ``script`` source: the key in the evaluator's ``scores``
    (default: the dimension key)."""
    speed: SpeedConfig | None = None
    """Clawdiators layer, ``speed`` source."""
    efficiency: EfficiencyConfig | None = None
    """Clawdiators layer, ``token_efficiency`` / ``call_efficiency`` sources."""

    _trimmed = field_validator("key", "metric", "judge_key")(_trim)

    @model_validator(mode="before")
    @classmethod
    def _string_form(cls, value: Any) -> Any:
        return {"key": value} if isinstance(value, str) else value


class LegacyLatency(Strict):
    target_ms: float | None = None
    max_ms: float | None = None


class LegacyCost(Strict):
    target_usd: float | None = None
    max_usd: float | None = None


class LegacyNormalization(Strict):
    latency: LegacyLatency | None = None
    cost: LegacyCost | None = None


class JudgeLimits(Strict):
    max_samples_per_judge: Int64 | None = None
    max_calls_usd: float | None = None
    max_tokens: Int64 | None = None


class Scorecard(Strict):
    strategy: str = "weighted"
    dimensions: list[Dimension] = Field(default_factory=list)
    pass_threshold: float | None = None
    normalization: LegacyNormalization | None = None
    judge_limits: JudgeLimits | None = None

    @field_validator("strategy")
    @classmethod
    def _default_strategy(cls, strategy: str) -> str:
        return strategy or "weighted"


class EvaluationSpec(Strict):
    """An AgentClash ``evaluation_spec``, normalized."""

    name: str = ""
    version_number: Int32 = 0
    judge_mode: str = ""
    validators: list[ValidatorDecl] = Field(default_factory=list)
    metrics: list[MetricDecl] = Field(default_factory=list)
    runtime_limits: RuntimeLimits | None = None
    pricing: Pricing | None = None
    behavioral: Behavioral | None = None
    post_execution_checks: list[PostExecutionCheck] = Field(default_factory=list)
    llm_judges: list[JudgeDecl] = Field(default_factory=list)
    scorecard: Scorecard = Field(default_factory=Scorecard)
    clawdiators: ClawdiatorsBlock | None = None
    """evalfleet's Clawdiators layer (a superset of AgentClash; see scoring.spec.superset)."""

    _trimmed = field_validator("name")(_trim)

    @model_validator(mode="after")
    def _expand_dimensions(self) -> EvaluationSpec:
        for dimension in self.scorecard.dimensions:
            if not dimension.source:
                _expand_builtin(dimension, self)
            if not dimension.better_direction and (dimension.source in HIGHER_BY_DEFAULT
                                                   or dimension.source in layer_sources.sources()):
                dimension.better_direction = "higher"
        return self

    def validator(self, key: str) -> ValidatorDecl | None:
        """The validator declared under ``key``, if any."""
        return next((v for v in self.validators if v.key == key), None)

    def check(self, key: str) -> PostExecutionCheck | None:
        """The post-execution check declared under ``key``, if any."""
        return next((c for c in self.post_execution_checks if c.key == key), None)


def _expand_builtin(dimension: Dimension, spec: EvaluationSpec) -> None:
    """Give a source-less built-in dimension its source, direction and legacy envelope."""
    source, direction = BUILTIN_DIMENSIONS.get(dimension.key, ("", ""))
    if not source:
        return
    dimension.source, dimension.better_direction = source, direction
    if source == "latency":
        dimension.normalization = dimension.normalization or _legacy_latency(spec)
    elif source == "cost":
        dimension.normalization = dimension.normalization or _legacy_cost(spec)


def _legacy_latency(spec: EvaluationSpec) -> Envelope | None:
    block = spec.scorecard.normalization
    legacy = block.latency if block else None
    if legacy is None:
        return None
    limits = spec.runtime_limits
    fallback = limits.max_duration_ms if limits else None
    return Envelope(target=legacy.target_ms, max=_first(legacy.max_ms, fallback))


def _legacy_cost(spec: EvaluationSpec) -> Envelope | None:
    block = spec.scorecard.normalization
    legacy = block.cost if block else None
    if legacy is None:
        return None
    limits = spec.runtime_limits
    fallback = limits.max_cost_usd if limits else None
    return Envelope(target=legacy.target_usd, max=_first(legacy.max_usd, fallback))


def _first(value: float | None, fallback: float | None) -> float | None:
    return value if value is not None else (float(fallback) if fallback is not None else None)


BUILTIN_DIMENSIONS: dict[str, tuple[str, str]] = {
    "correctness": ("validators", "higher"),
    "reliability": ("reliability", "higher"),
    "latency": ("latency", "lower"),
    "cost": ("cost", "lower"),
    "behavioral": ("behavioral", "higher"),
}

Direction = Literal["higher", "lower"]


def spec_json_schema() -> dict[str, Any]:
    """JSON Schema of an ``evaluation_spec`` (string-form dimensions included)."""
    schema = EvaluationSpec.model_json_schema()
    items = schema["$defs"]["Scorecard"]["properties"]["dimensions"]["items"]
    schema["$defs"]["Scorecard"]["properties"]["dimensions"]["items"] = {
        "anyOf": [items, {"type": "string", "description": "a built-in dimension key"}]}
    return schema
