"""Result records of one evaluation: validators, metrics, dimensions."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

State = Literal["available", "unavailable", "error"]


class ValidatorResult(BaseModel):
    """One validator's result (docs/scoring.md §6)."""

    key: str
    type: str
    state: State
    outcome_class: str
    verdict: str = ""
    normalized_score: float | None = None
    target: str = ""
    expected_from: str = ""
    actual_value: str | None = None
    expected_value: str | None = None
    reason: str = ""
    regression_case_id: str | None = None
    evidence: dict[str, Any] = Field(default_factory=dict)
    source: dict[str, Any] | None = None


class MetricResult(BaseModel):
    """One metric's result (§8)."""

    key: str
    type: str
    collector: str
    state: State
    unit: str = ""
    numeric_value: float | None = None
    boolean_value: bool | None = None
    text_value: str | None = None
    reason: str = ""
    metadata: dict[str, Any] = Field(default_factory=dict)


class DimensionResult(BaseModel):
    """One scorecard dimension's result (§10)."""

    key: str
    state: State
    score: float | None = None
    reason: str = ""
    better_direction: str = ""
