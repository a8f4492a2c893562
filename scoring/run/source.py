"""What a dimension source is: one declared dimension and the run's :class:`Inputs` in, a
:class:`~scoring.run.records.DimensionResult` out.

The built-in sources (:mod:`.dimensions`) and a layer's (:class:`scoring.layers.Layer`)
share this shape.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..record.evidence import Evidence
from ..spec.models import Dimension, EvaluationSpec
from .records import DimensionResult, MetricResult, ValidatorResult


@dataclass(frozen=True)
class Inputs:
    """What dimension sources read: everything evaluated before them."""

    spec: EvaluationSpec
    evidence: Evidence
    validators: list[ValidatorResult]
    metrics: list[MetricResult]
    judge_results: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    human_preference: float | None = None
    readings: Mapping[str, object] = field(default_factory=dict)
    """Each registered layer's reading of the run's events, by layer name."""


Source = Callable[[Dimension, Inputs], DimensionResult]
"""A dimension source: one declared dimension and everything scored before it in, its
result out."""
