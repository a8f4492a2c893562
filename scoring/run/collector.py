"""What a metric collector is: it reads a :class:`Context`, it gives a :class:`Collected`.

The built-in collectors (:mod:`.collectors`) and a layer's (:class:`scoring.layers.Layer`)
share this shape; :func:`value` and :func:`unavailable` are the two common outcomes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..record.evidence import Evidence
from ..spec.models import EvaluationSpec
from .records import State, ValidatorResult


@dataclass(frozen=True)
class Context:
    """What a collector may read."""

    spec: EvaluationSpec
    evidence: Evidence
    validators: list[ValidatorResult]
    readings: Mapping[str, object] = field(default_factory=dict)
    """Each registered layer's reading of the run's events, by layer name."""


@dataclass(frozen=True)
class Collected:
    """A collector's outcome before it becomes a :class:`MetricResult`."""

    state: State
    numeric: float | None = None
    boolean: bool | None = None
    reason: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)


Collector = Callable[[Context], Collected]


def value(number: float, **metadata: Any) -> Collected:
    """An available numeric value."""
    return Collected("available", numeric=float(number), metadata=metadata)


def unavailable(reason: str, **metadata: Any) -> Collected:
    """No value, and why."""
    return Collected("unavailable", reason=reason, metadata=metadata)
