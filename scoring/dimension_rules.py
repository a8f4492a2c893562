"""Load-time rules of scorecard dimensions (scoring-semantics §3, "Dimensions")."""

from __future__ import annotations

from .errors import FieldError
from .rulekit import NON_NEGATIVE, ROOT, Findings, threshold, unique_keys
from .spec import Dimension, EvaluationSpec

SOURCES = ("validators", "metric", "reliability", "latency", "cost", "behavioral", "llm_judge",
           "human_preference")
#: The Clawdiators layer's sources: valid only in a spec with a ``clawdiators`` block.
LAYER_SOURCES = ("script", "speed", "token_efficiency", "call_efficiency")
SOURCE_MESSAGE = ("must be one of validators, metric, reliability, latency, cost, behavioral, "
                  "llm_judge")
ENVELOPE_SOURCES = ("metric", "latency", "cost")
HIGHER_ONLY = ("validators", "reliability", "behavioral", "llm_judge", "script", "speed",
               "token_efficiency", "call_efficiency")


def dimension_rules(spec: EvaluationSpec, out: Findings) -> None:
    dimensions = spec.scorecard.dimensions
    unique_keys((d.key for d in dimensions),
                lambda i: f"{ROOT}.scorecard.dimensions[{i}]", out)
    for i, dimension in enumerate(dimensions):
        path = f"{ROOT}.scorecard.dimensions[{i}]"
        layer = LAYER_SOURCES if spec.clawdiators is not None else ()
        if dimension.source not in SOURCES + layer:
            out.append(FieldError(f"{path}.source", SOURCE_MESSAGE))
        else:
            out.extend(_dimension_source(dimension, path, spec))
        out.extend(_dimension_common(dimension, path, spec))


def _dimension_source(dimension: Dimension, path: str, spec: EvaluationSpec) -> Findings:
    found: Findings = []
    source = dimension.source
    if source in HIGHER_ONLY and dimension.better_direction != "higher":
        message = f'must be "higher" for {source} source'
        found.append(FieldError(f"{path}.better_direction", message))
    if source == "validators":
        known = {v.key for v in spec.validators}
        found += [FieldError(f"{path}.validators[{j}]", f'references unknown validator key "{k}"')
                  for j, k in enumerate(dimension.validators) if k not in known]
    if source == "metric":
        found += _metric_reference(dimension, path, spec)
    if source in ENVELOPE_SOURCES:
        found += _envelope(dimension, path)
    if source == "behavioral" and not (spec.behavioral and spec.behavioral.signals):
        found.append(FieldError(f"{ROOT}.behavioral", "is required"))
    if source == "llm_judge":
        found += _judge_reference(dimension, path, spec)
    return found


def _metric_reference(dimension: Dimension, path: str, spec: EvaluationSpec) -> Findings:
    if not dimension.metric:
        return [FieldError(f"{path}.metric", "is required when source is metric")]
    if all(m.key != dimension.metric for m in spec.metrics):
        return [FieldError(f"{path}.metric", f'references unknown metric key "{dimension.metric}"')]
    return []


def _envelope(dimension: Dimension, path: str) -> Findings:
    direction, envelope = dimension.better_direction, dimension.normalization
    found: Findings = []
    if direction not in ("higher", "lower"):
        found.append(FieldError(f"{path}.better_direction", 'must be "higher" or "lower"'))
    if envelope is None:
        message = f"is required when source is {dimension.source}"
        return [*found, FieldError(f"{path}.normalization", message)]
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


def _judge_reference(dimension: Dimension, path: str, spec: EvaluationSpec) -> Findings:
    field = f"{path}.judge_key"
    if not dimension.judge_key:
        return [FieldError(field, "judge_key is required when source is llm_judge")]
    if all(j.key != dimension.judge_key for j in spec.llm_judges):
        return [FieldError(field, f'references unknown judge key "{dimension.judge_key}"')]
    return []


def _dimension_common(dimension: Dimension, path: str, spec: EvaluationSpec) -> Findings:
    found: Findings = []
    if dimension.judge_key and dimension.source != "llm_judge":
        found.append(FieldError(f"{path}.judge_key", "must be empty unless source is llm_judge"))
    if dimension.weight is not None and dimension.weight < 0:
        found.append(FieldError(f"{path}.weight", NON_NEGATIVE))
    required = dimension.gate or spec.scorecard.strategy == "binary"
    found += threshold(dimension.pass_threshold, required, f"{path}.pass_threshold")
    return found
