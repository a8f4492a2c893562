"""Load-time rules of the layer (its :attr:`scoring.layers.Layer.rules`, run after AgentClash's).

The weight rule is Clawdiators' (docs/scoring.md §C1): add the weights left to right in
doubles; the spec is valid only when |Σ − 1| < 0.001 (strict, so exactly 0.001 fails).
"""

from __future__ import annotations

from collections import Counter

from ..errors import FieldError
from ..spec.models import Dimension, EvaluationSpec
from ..spec.superset import CHECK_TYPES, RUNTIMES, SEVERITIES, SPEED_FORMULAS, SubmissionCheck
from ..validators.schemas import SchemaProblem, load_schema
from .sources import call_limits, speed_limit, token_budget

ROOT = "evaluation_spec"
BLOCK = f"{ROOT}.clawdiators"
WEIGHT_MESSAGE = "Scoring dimension weights must sum to 1.0"
TOLERANCE = 0.001
POSITIVE = "must be greater than 0"
Findings = list[FieldError]


def weights_sum_to_one(weights: list[float]) -> bool:
    """Clawdiators' rule: |Σ weights − 1| < 0.001, summed left to right."""
    total = 0.0
    for weight in weights:
        total += weight
    return abs(total - 1.0) < TOLERANCE


def layer_rules(spec: EvaluationSpec, out: Findings) -> None:
    """Append every finding of the layer's blocks and dimension fields."""
    for i, dimension in enumerate(spec.scorecard.dimensions):
        out.extend(_dimension(spec, dimension, f"{ROOT}.scorecard.dimensions[{i}]"))
    block = spec.clawdiators
    if block is None:
        return
    if block.weights_sum_to_one:
        out.extend(_weights(spec))
    out.extend(_constraints(spec))
    out.extend(_evaluator(spec))
    keys = {d.key for d in spec.scorecard.dimensions}
    counts = Counter(c.key for c in block.submission_checks)
    for i, check in enumerate(block.submission_checks):
        path = f"{BLOCK}.submission_checks[{i}]"
        if counts[check.key] > 1:
            out.append(FieldError(f"{path}.key", "must be unique"))
        out.extend(_check(check, path, keys))


def _weights(spec: EvaluationSpec) -> Findings:
    path = f"{ROOT}.scorecard.dimensions"
    raw = [d.weight for d in spec.scorecard.dimensions]
    if any(w is None for w in raw):
        return [FieldError(path, "every weight is required when weights_sum_to_one is set")]
    if weights_sum_to_one([w for w in raw if w is not None]):
        return []
    return [FieldError(path, WEIGHT_MESSAGE)]


def _dimension(spec: EvaluationSpec, dimension: Dimension, path: str) -> Findings:
    found: Findings = []
    for name, source in (("score_key", "script"), ("speed", "speed"),
                         ("efficiency", "token_efficiency")):
        if getattr(dimension, name) and dimension.source != source and not (
                name == "efficiency" and dimension.source == "call_efficiency"):
            found.append(FieldError(f"{path}.{name}", f"must be empty unless source is {source}"))
    check = SOURCE_RULES.get(dimension.source) if spec.clawdiators is not None else None
    return found + (check(spec, dimension, path) if check else [])


def _script(spec: EvaluationSpec, dimension: Dimension, path: str) -> Findings:
    if spec.clawdiators is None or spec.clawdiators.evaluator is None:
        return [FieldError(f"{BLOCK}.evaluator", "is required when source is script")]
    return []


def _speed(spec: EvaluationSpec, dimension: Dimension, path: str) -> Findings:
    found: Findings = []
    config = dimension.speed
    if config and config.formula not in SPEED_FORMULAS:
        found.append(FieldError(f"{path}.speed.formula",
                                "must be one of " + ", ".join(SPEED_FORMULAS)))
    limit = speed_limit(spec, dimension)
    if limit is None or limit <= 0:
        found.append(FieldError(f"{path}.speed.limit_ms", "is required when source is speed "
                                "(or set clawdiators.constraints.max_duration_ms)"))
    keys = {d.key for d in spec.scorecard.dimensions} - {dimension.key}
    found += [FieldError(f"{path}.speed.gate_on[{j}]", f'references unknown dimension key "{k}"')
              for j, k in enumerate(config.gate_on if config else []) if k not in keys]
    return found


def _tokens(spec: EvaluationSpec, dimension: Dimension, path: str) -> Findings:
    budget = token_budget(spec, dimension)
    if budget is None or budget <= 0:
        return [FieldError(f"{path}.efficiency.budget", "is required when source is "
                           "token_efficiency (or set clawdiators.constraints.token_budget)")]
    return []


def _calls(spec: EvaluationSpec, dimension: Dimension, path: str) -> Findings:
    optimal, most = call_limits(spec, dimension)
    if most is None:
        return [FieldError(f"{path}.efficiency.max", "is required when source is "
                           "call_efficiency (or set clawdiators.constraints.max_llm_calls)")]
    if optimal < 0 or most <= optimal:
        return [FieldError(f"{path}.efficiency.max", "must be greater than optimal (≥ 0)")]
    return []


def _constraints(spec: EvaluationSpec) -> Findings:
    block = spec.clawdiators.constraints if spec.clawdiators else None
    names = ("max_duration_ms", "max_total_tokens", "max_tool_calls", "max_llm_calls",
             "max_cost_usd", "token_budget")
    return [FieldError(f"{BLOCK}.constraints.{n}", POSITIVE) for n in names
            if block and getattr(block, n) is not None and getattr(block, n) <= 0]


def _evaluator(spec: EvaluationSpec) -> Findings:
    evaluator, path = (spec.clawdiators.evaluator if spec.clawdiators else None,
                       f"{BLOCK}.evaluator")
    if evaluator is None:
        return []
    found: Findings = []
    if evaluator.runtime not in RUNTIMES:
        found.append(FieldError(f"{path}.runtime", "must be one of " + ", ".join(RUNTIMES)))
    if not evaluator.script.strip():
        found.append(FieldError(f"{path}.script", "is required"))
    if evaluator.timeout_ms <= 0:
        found.append(FieldError(f"{path}.timeout_ms", POSITIVE))
    if evaluator.memory_mb < 16:
        found.append(FieldError(f"{path}.memory_mb", "must be at least 16"))
    if evaluator.score_scale not in (1, 1000):
        found.append(FieldError(f"{path}.score_scale", "must be 1 or 1000"))
    return found


def _check(check: SubmissionCheck, path: str, dimension_keys: set[str]) -> Findings:
    found: Findings = []
    if not check.key.strip():
        found.append(FieldError(f"{path}.key", "is required"))
    if check.severity not in SEVERITIES:
        found.append(FieldError(f"{path}.severity", 'must be "error" or "warning"'))
    found += [FieldError(f"{path}.guards[{j}]", f'references unknown dimension key "{k}"')
              for j, k in enumerate(check.guards) if k not in dimension_keys]
    if check.type not in CHECK_TYPES:
        return [*found, FieldError(f"{path}.type", "must be one of " + ", ".join(CHECK_TYPES))]
    return found + _check_params(check, path)


def _check_params(check: SubmissionCheck, path: str) -> Findings:
    if check.type in ("required_files", "forbidden_paths") and not check.paths:
        return [FieldError(f"{path}.paths", f"is required for {check.type}")]
    if check.type.startswith("max_") and (check.limit is None or check.limit < 0):
        return [FieldError(f"{path}.limit", f"is required for {check.type} (≥ 0)")]
    if check.type == "output_json_schema":
        try:
            load_schema(check.schema_)
        except SchemaProblem as problem:
            return [FieldError(f"{path}.schema", str(problem))]
    return []


SOURCE_RULES = {"script": _script, "speed": _speed, "token_efficiency": _tokens,
                "call_efficiency": _calls}
