"""Load-time rules of scorecard dimensions (docs/scoring.md §3, "Dimensions")."""

from __future__ import annotations

from typing import NamedTuple

from .. import layers
from ..compat.goquote import quote
from ..errors import FieldError
from .models import Dimension, EvaluationSpec
from .rulekit import IN_UNIT, NON_NEGATIVE, ROOT, Findings

SOURCES = ("validators", "metric", "reliability", "latency", "cost", "behavioral", "llm_judge",
           "human_preference")
SOURCE_MESSAGE = ("must be one of validators, metric, reliability, latency, cost, behavioral, "
                  "llm_judge")
ENVELOPE_SOURCES = ("metric", "latency", "cost")
NUMERIC_JUDGE_MODES = ("rubric", "reference", "n_wise", "assertion")
HIGHER_ONLY = ("validators", "reliability")
"""Sources whose direction must be "higher"; so must every registered layer's sources
(:mod:`scoring.layers`), which are evalfleet's own."""


def dimension_rules(spec: EvaluationSpec, validator_keys: set[str], metric_keys: set[str],
                    judge_modes: dict[str, str], out: Findings) -> None:
    """Every dimension's findings, in AgentClash's order (``validation.go``): a blank key,
    a repeated key or an unknown source stops the dimension's checks."""
    seen: set[str] = set()
    layer = layers.sources_for(spec)
    for i, dimension in enumerate(spec.scorecard.dimensions):
        path = f"{ROOT}.scorecard.dimensions[{i}]"
        if not dimension.key:
            out.append(FieldError(f"{path}.key", "is required"))
            continue
        if dimension.key in seen:
            out.append(FieldError(path, "must be unique"))
            continue
        seen.add(dimension.key)
        if dimension.source not in SOURCES + layer:
            out.append(FieldError(f"{path}.source", SOURCE_MESSAGE))
            continue
        refs = _References(validator_keys, metric_keys, judge_modes)
        out.extend(_source(dimension, path, spec, refs))
        out.extend(_direction(dimension, path))
        out.extend(_envelope(dimension, path))
        out.extend(_common(dimension, path, spec))


class _References(NamedTuple):
    validators: set[str]
    metrics: set[str]
    judges: dict[str, str]


def _source(dimension: Dimension, path: str, spec: EvaluationSpec,
            refs: _References) -> Findings:
    source, found = dimension.source, []
    if source == "validators":
        found += [FieldError(f"{path}.validators[{j}]",
                             f"references unknown validator key {quote(k)}")
                  for j, k in enumerate(dimension.validators) if k not in refs.validators]
    if source == "metric":
        if not dimension.metric:
            found.append(FieldError(f"{path}.metric", "is required when source is metric"))
        elif dimension.metric not in refs.metrics:
            found.append(FieldError(f"{path}.metric",
                                    f"references unknown metric key {quote(dimension.metric)}"))
    if source in ENVELOPE_SOURCES and dimension.normalization is None:
        found.append(FieldError(f"{path}.normalization", f"is required when source is {source}"))
    if source == "behavioral" and not (spec.behavioral and spec.behavioral.signals):
        found.append(FieldError(f"{ROOT}.behavioral",
                                "is required when a scorecard dimension uses source behavioral"))
    if source == "llm_judge":
        found += _judge_reference(dimension, path, refs.judges)
    return found


def _judge_reference(dimension: Dimension, path: str, judges: dict[str, str]) -> Findings:
    field = f"{path}.judge_key"
    if not dimension.judge_key:
        return [FieldError(field, "is required when source is llm_judge")]
    if dimension.judge_key not in judges:
        return [FieldError(field, f"references unknown judge key {quote(dimension.judge_key)}")]
    mode = judges[dimension.judge_key]
    if mode not in NUMERIC_JUDGE_MODES:
        return [FieldError(field, f"judge {quote(dimension.judge_key)} mode {quote(mode)} does "
                                  "not produce a numeric score usable as a dimension")]
    return []


def _direction(dimension: Dimension, path: str) -> Findings:
    """Quality sources are "higher"; llm_judge and behavioral may also leave it empty."""
    source, direction = dimension.source, dimension.better_direction
    found = []
    if source in ("llm_judge", "behavioral") and direction not in ("", "higher"):
        found.append(FieldError(f"{path}.better_direction",
                                f'must be "higher" for {source} source (got {quote(direction)})'))
    if source != "llm_judge" and dimension.judge_key:
        found.append(FieldError(f"{path}.judge_key", "must be empty unless source is llm_judge"))
    if (source in HIGHER_ONLY or source in layers.sources()) and direction != "higher":
        found.append(FieldError(f"{path}.better_direction",
                                f'must be "higher" for {source} source (got {quote(direction)})'))
    return found


def _envelope(dimension: Dimension, path: str) -> Findings:
    if dimension.source not in ENVELOPE_SOURCES:
        return []
    direction, envelope = dimension.better_direction, dimension.normalization
    found: Findings = []
    if direction not in ("higher", "lower"):
        found.append(FieldError(f"{path}.better_direction", "must be higher or lower"))
    if envelope is None:
        return found
    for name in ("target", "max"):
        if getattr(envelope, name) is None:
            found.append(FieldError(f"{path}.normalization.{name}", "is required"))
    if envelope.target is None or envelope.max is None:
        return found
    if direction == "lower" and envelope.max <= envelope.target:
        found.append(FieldError(f"{path}.normalization.max",
                                "must be greater than target when better_direction is lower"))
    if direction == "higher" and envelope.max >= envelope.target:
        found.append(FieldError(f"{path}.normalization.max",
                                "must be less than target when better_direction is higher"))
    return found


def _common(dimension: Dimension, path: str, spec: EvaluationSpec) -> Findings:
    found: Findings = []
    if dimension.weight is not None and dimension.weight < 0:
        found.append(FieldError(f"{path}.weight", NON_NEGATIVE))
    field, value = f"{path}.pass_threshold", dimension.pass_threshold
    if value is None:
        if dimension.gate or spec.scorecard.strategy == "binary":
            found.append(FieldError(field, "is required when the dimension is gated or "
                                           "strategy is binary"))
    elif not 0 <= value <= 1:
        found.append(FieldError(field, IN_UNIT))
    return found
