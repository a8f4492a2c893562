"""The scorecard document: AgentClash's persisted fields plus the Clawdiators layer
(docs/scoring.md §13, §16).

``score`` is the overall score on the Clawdiators 0–1000 scale (rounded half up), ``result``
maps it to win (≥ 700), draw (≥ 400) or loss — and is null when there is no score or the
evaluation is ``invalid`` (an evaluator or pack error is no contest), except that a run
invalid only because the candidate's answer could not be read is a loss with score 0.
Both are null too, with ``withheld_reason``, when a judge's provider never answered.
``score_breakdown`` gives each available dimension's 0–1000 score, its normalized weight
and their product.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from .records import DimensionResult, MetricResult, ValidatorResult

SCHEMA_VERSION = 1
WIN_AT, DRAW_AT = 700, 400
Result = Literal["win", "draw", "loss"]


class DimensionEntry(BaseModel):
    state: str
    score: float | None = None
    reason: str = ""
    better_direction: str = ""


class ValidatorSummary(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    total: int = 0
    available: int = 0
    unavailable: int = 0
    error: int = 0
    passed: int = Field(0, alias="pass")
    fail: int = 0


class MetricSummary(BaseModel):
    total: int = 0
    available: int = 0
    unavailable: int = 0
    error: int = 0


class ValidatorDetail(BaseModel):
    key: str
    type: str
    verdict: str
    state: str
    outcome_class: str
    reason: str
    normalized_score: float | None
    regression_case_id: str | None = None
    evidence: dict[str, Any] = Field(default_factory=dict)
    source: dict[str, Any] | None = None


class MetricDetail(BaseModel):
    key: str
    collector: str
    state: str
    reason: str = ""
    numeric_value: float | None = None
    text_value: str | None = None
    boolean_value: bool | None = None


class BreakdownEntry(BaseModel):
    score: int
    """The dimension's 0–1 score × 1000, rounded half up."""
    weight: float
    """The dimension's weight divided by the sum over available dimensions."""
    weighted: float
    """``score × weight``, unrounded; under ``weighted`` these add up to the total."""


class SubmissionWarning(BaseModel):
    """A failed submission check (Clawdiators layer): ``error`` zeroed what it guards."""

    severity: str
    check: str
    message: str


class ConstraintViolation(BaseModel):
    """A runtime limit the run went over (Clawdiators layer; never changes the score)."""

    constraint: str
    limit: float
    used: float
    message: str


class Scorecard(BaseModel):
    """One run's scorecard."""

    schema_version: int = SCHEMA_VERSION
    run_agent_id: str | None = None
    evaluation_spec_id: str | None = None
    status: Literal["complete", "partial", "failed"]
    strategy: str
    overall_score: float | None
    passed: bool | None
    overall_reason: str
    validity: Literal["valid", "degraded", "invalid"]
    validity_reason: str = ""
    warnings: list[str] = Field(default_factory=list)
    dimensions: dict[str, DimensionEntry] = Field(default_factory=dict)
    validator_summary: ValidatorSummary = Field(default_factory=lambda: ValidatorSummary())
    validator_details: list[ValidatorDetail] = Field(default_factory=list)
    metric_summary: MetricSummary = Field(default_factory=MetricSummary)
    metric_details: list[MetricDetail] = Field(default_factory=list)
    side_metrics: dict[str, Any] = Field(default_factory=dict)
    llm_judge_details: list[dict[str, Any]] = Field(default_factory=list)
    score: int | None = None
    result: Result | None = None
    score_breakdown: dict[str, BreakdownEntry] = Field(default_factory=dict)
    submission_warnings: list[SubmissionWarning] = Field(default_factory=list)
    constraint_violations: list[ConstraintViolation] = Field(default_factory=list)
    harness_warning: str | None = None
    """What the harness could not verify (e.g. no agent trajectory was supplied)."""
    withheld_reason: str | None = None
    """Why ``score`` and ``result`` are null although the engine scored the run: a judged
    dimension is unavailable because its judge's provider never answered (docs/scoring.md
    §14). AgentClash's own fields are as its engine gives them; the run can be judged again
    from its recorded evidence."""

    def to_json(self, **kwargs: Any) -> str:
        """The persisted JSON form (``pass`` spelled as in AgentClash)."""
        return self.model_dump_json(by_alias=True, **kwargs)


def to_points(score: float) -> int:
    """A 0–1 score on the 0–1000 scale, rounded half up (JS ``Math.round`` for positives)."""
    return int((Decimal(repr(score)) * 1000).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def result_for(points: int | None, validity: str, forfeit: bool = False) -> Result | None:
    """win / draw / loss from the 0–1000 score; None with no score or an invalid run.

    ``forfeit``: the run is invalid only because the candidate's own answer could not be
    read (``engine.answer_made_invalid``): a loss, whatever the score, never no contest.
    """
    if forfeit:
        return "loss"
    if points is None or validity == "invalid":
        return None
    return "win" if points >= WIN_AT else "draw" if points >= DRAW_AT else "loss"


def validator_summary(results: list[ValidatorResult]) -> ValidatorSummary:
    return ValidatorSummary(
        total=len(results),
        available=sum(r.state == "available" for r in results),
        unavailable=sum(r.state == "unavailable" for r in results),
        error=sum(r.state == "error" for r in results),
        passed=sum(r.state == "available" and r.verdict == "pass" for r in results),
        fail=sum(r.state == "available" and r.verdict == "fail" for r in results),
    )


def metric_summary(results: list[MetricResult]) -> MetricSummary:
    return MetricSummary(
        total=len(results),
        available=sum(r.state == "available" for r in results),
        unavailable=sum(r.state == "unavailable" for r in results),
        error=sum(r.state == "error" for r in results),
    )


def validator_detail(result: ValidatorResult) -> ValidatorDetail:
    fields = set(ValidatorDetail.model_fields)
    return ValidatorDetail.model_validate(result.model_dump(include=fields))


def metric_detail(result: MetricResult) -> MetricDetail:
    return MetricDetail.model_validate(result.model_dump(include=set(MetricDetail.model_fields)))


def dimension_entry(result: DimensionResult) -> DimensionEntry:
    return DimensionEntry(state=result.state, score=result.score, reason=result.reason,
                          better_direction=result.better_direction)
