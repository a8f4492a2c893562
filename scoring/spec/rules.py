"""Load-time validation of an evaluation spec: AgentClash's ``ValidateEvaluationSpec``.

Every rule runs and every finding is collected (not fail-fast) as a :class:`FieldError`
with AgentClash's field path and message, **in AgentClash's order** (``validation.go``):
top-level fields, validators (key, type, config, target, expected_from, file references),
post-execution checks, ``file:`` cross-references, metrics, behavioral signals, pricing,
LLM judges (``validation_judges.go``), dimensions, scorecard thresholds, the hybrid gate
rule and ``judge_mode`` coherence. The rules of registered layers (:mod:`scoring.layers`:
evalfleet's Clawdiators layer) come last. Rules of one validator type's config live with
that type (:attr:`Kind.config_rules`).
"""

from __future__ import annotations

from .. import layers
from ..compat.goquote import quote
from ..errors import FieldError
from ..judges.rules import judge_rules
from ..record import references
from ..validators import lookup
from ..validators.base import Kind, config_parse_message
from .dimension_rules import dimension_rules
from .models import EvaluationSpec, ValidatorDecl
from .rulekit import IN_UNIT, NON_NEGATIVE, POSITIVE, ROOT, Findings

JUDGE_MODES = ("deterministic", "llm_judge", "hybrid")
STRATEGIES = ("weighted", "binary", "hybrid")
METRIC_TYPES = ("numeric", "text", "boolean")
CHECK_TYPES = ("file_capture", "directory_listing")
SIGNALS = ("recovery_behavior", "exploration_efficiency", "error_cascade", "scope_adherence",
           "confidence_calibration")
CALIBRATION = "is not supported until confidence reporting lands"
FILE_VALIDATORS = frozenset({"file_content_match", "file_exists", "file_json_schema",
                             "directory_structure", "code_execution", "postcondition"})
NO_EXPECTED_FROM = frozenset({"file_exists", "file_json_schema", "directory_structure",
                              "code_execution", "tool_call_assertion", "postcondition"})
MAX_ITERATIONS = 1000


def validate_spec(spec: EvaluationSpec, root: str = ROOT) -> Findings:
    """All findings for ``spec``; an empty list means the spec is valid."""
    out: Findings = []
    _top_level(spec, out)
    validator_keys = _validators(spec, out)
    check_keys = _checks(spec, out)
    _file_references(spec, check_keys, out)
    metric_keys = _metrics(spec, out)
    _behavioral(spec, out)
    _pricing(spec, out)
    judge_modes = judge_rules(spec, validator_keys, metric_keys, out)
    dimension_rules(spec, validator_keys, metric_keys, judge_modes, out)
    _scorecard(spec, out)
    _judge_mode(spec, out)
    for layer in layers.registered():
        layer.rules(spec, out)
    if root != ROOT:
        out = [f._replace(field=root + f.field.removeprefix(ROOT)) for f in out]
    return out


def _top_level(spec: EvaluationSpec, out: Findings) -> None:
    if not spec.name.strip():
        out.append(FieldError(f"{ROOT}.name", "is required"))
    if spec.version_number <= 0:
        out.append(FieldError(f"{ROOT}.version_number", POSITIVE))
    if spec.judge_mode not in JUDGE_MODES:
        out.append(FieldError(f"{ROOT}.judge_mode", "must be one of " + ", ".join(JUDGE_MODES)))
    if not spec.validators:
        out.append(FieldError(f"{ROOT}.validators", "must contain at least one validator"))
    if not spec.scorecard.dimensions:
        out.append(FieldError(f"{ROOT}.scorecard.dimensions",
                              "must contain at least one dimension"))
    if spec.scorecard.strategy not in STRATEGIES:
        out.append(FieldError(f"{ROOT}.scorecard.strategy",
                              "must be one of " + ", ".join(STRATEGIES)))
    _runtime_limits(spec, out)


def _runtime_limits(spec: EvaluationSpec, out: Findings) -> None:
    limits, path = spec.runtime_limits, f"{ROOT}.runtime_limits"
    if limits is None:
        return
    for name in ("max_total_tokens", "max_cost_usd", "max_duration_ms"):
        value = getattr(limits, name)
        if value is not None and value <= 0:
            out.append(FieldError(f"{path}.{name}", POSITIVE))
    if limits.max_iterations is not None and not 1 <= limits.max_iterations <= MAX_ITERATIONS:
        out.append(FieldError(f"{path}.max_iterations",
                              f"must be between 1 and {MAX_ITERATIONS}"))


def _validators(spec: EvaluationSpec, out: Findings) -> set[str]:
    """Every validator's findings; returns the (non-blank) validator keys."""
    keys: set[str] = set()
    for i, decl in enumerate(spec.validators):
        path = f"{ROOT}.validators[{i}]"
        if not decl.key:
            out.append(FieldError(f"{path}.key", "is required"))
        else:
            if decl.key in keys:
                out.append(FieldError(f"{path}.key", "must be unique"))
            keys.add(decl.key)
        kind = lookup(decl.type)
        if kind is None:
            out.append(FieldError(f"{path}.type", "is not a supported validator type"))
        out.extend(_config(kind, decl, path))
        out.extend(_target(decl, path))
        out.extend(_expected_from(decl, path))
        out.extend(_file_target(decl, path, spec))
    return keys


def _config(kind: Kind | None, decl: ValidatorDecl, path: str) -> Findings:
    """``validateValidatorConfig``: only the strict types' configs are checked at load."""
    field = f"{path}.config"
    if "config" not in decl.model_fields_set and decl.type != "tool_call_assertion":
        return [FieldError(field, "is required")] if decl.type == "postcondition" else []
    if kind is None or kind.strictness != "strict":
        return []
    if "config" not in decl.model_fields_set:
        return [FieldError(field, f"{kind.name} config is required")]
    config, problem = kind.decode_config(decl.config)
    if problem is not None:
        return [FieldError(field, config_parse_message(problem))]
    return kind.config_rules(config, field) if kind.config_rules else []


def _target(decl: ValidatorDecl, path: str) -> Findings:
    field = f"{path}.target"
    if not decl.target:
        return [FieldError(field, "is required")]
    if decl.type == "tool_call_assertion":
        if decl.target != "tool_calls":
            return [FieldError(field, 'must be "tool_calls" for tool_call_assertion validators')]
        return []
    if not references.is_supported(decl.target):
        return [FieldError(field, "must be a supported evidence reference")]
    return []


def _expected_from(decl: ValidatorDecl, path: str) -> Findings:
    field = f"{path}.expected_from"
    if decl.type not in NO_EXPECTED_FROM:
        if not decl.expected_from:
            return [FieldError(field, "is required")]
        if not references.is_supported(decl.expected_from):
            return [FieldError(field, "must be a supported evidence reference")]
        return []
    if decl.type in ("tool_call_assertion", "postcondition") and decl.expected_from:
        return [FieldError(field, f"must be omitted for {decl.type} validators")]
    return []


def _file_target(decl: ValidatorDecl, path: str, spec: EvaluationSpec) -> Findings:
    """File validators need ``file:``; code_execution and postcondition need the check."""
    field, found = f"{path}.target", []
    if decl.type in FILE_VALIDATORS and decl.target and not decl.target.startswith("file:"):
        found.append(FieldError(field, "must use file: prefix for file validators"))
    key = decl.target.removeprefix("file:")
    unknown = f"references unknown post_execution_check key {quote(key)}"
    if decl.type == "code_execution":
        check = spec.check(key)
        if check is None:
            found.append(FieldError(field, unknown))
        elif check.type != "file_capture":
            found.append(FieldError(field, "must reference a file_capture post_execution_check"))
    if decl.type == "postcondition" and decl.target.startswith("file:") and \
            not spec.post_execution_checks:
        found.append(FieldError(field, unknown))
    return found


def _checks(spec: EvaluationSpec, out: Findings) -> set[str]:
    keys: set[str] = set()
    for i, check in enumerate(spec.post_execution_checks):
        path = f"{ROOT}.post_execution_checks[{i}]"
        if not check.key:
            out.append(FieldError(f"{path}.key", "is required"))
        else:
            if check.key in keys:
                out.append(FieldError(f"{path}.key", "must be unique"))
            keys.add(check.key)
        if check.type not in CHECK_TYPES:
            out.append(FieldError(f"{path}.type", "must be file_capture or directory_listing"))
        if not check.path:
            out.append(FieldError(f"{path}.path", "is required"))
        if check.max_size_bytes is not None and check.max_size_bytes < 0:
            out.append(FieldError(f"{path}.max_size_bytes", NON_NEGATIVE))
    return keys


def _file_references(spec: EvaluationSpec, check_keys: set[str], out: Findings) -> None:
    """With any check declared, every ``file:`` target must name one (any validator type)."""
    for i, decl in enumerate(spec.validators):
        key = decl.target.removeprefix("file:")
        if decl.target.startswith("file:") and check_keys and key not in check_keys:
            out.append(FieldError(f"{ROOT}.validators[{i}].target",
                                  f"references unknown post_execution_check key {quote(key)}"))


def _metrics(spec: EvaluationSpec, out: Findings) -> set[str]:
    keys: set[str] = set()
    for i, metric in enumerate(spec.metrics):
        path = f"{ROOT}.metrics[{i}]"
        if not metric.key:
            out.append(FieldError(f"{path}.key", "is required"))
        else:
            if metric.key in keys:
                out.append(FieldError(f"{path}.key", "must be unique"))
            keys.add(metric.key)
        if metric.type not in METRIC_TYPES:
            out.append(FieldError(f"{path}.type", "is not a supported metric type"))
        if not metric.collector:
            out.append(FieldError(f"{path}.collector", "is required"))
        elif metric.collector == "behavioral_confidence_calibration_score":
            out.append(FieldError(f"{path}.collector", CALIBRATION))
    return keys


def _behavioral(spec: EvaluationSpec, out: Findings) -> None:
    block, path = spec.behavioral, f"{ROOT}.behavioral"
    if block is None:
        return
    if not block.signals:
        out.append(FieldError(f"{path}.signals", "must contain at least one signal"))
    seen: set[str] = set()
    for i, signal in enumerate(block.signals):
        where = f"{path}.signals[{i}]"
        if signal.key not in SIGNALS:
            out.append(FieldError(f"{where}.key", "must be one of " + ", ".join(SIGNALS)))
        else:
            if signal.key in seen:
                out.append(FieldError(f"{where}.key", "must be unique"))
            seen.add(signal.key)
            if signal.key == "confidence_calibration":
                out.append(FieldError(f"{where}.key", CALIBRATION))
        if signal.weight <= 0:
            out.append(FieldError(f"{where}.weight", POSITIVE))
        out.extend(_signal_threshold(signal.pass_threshold, signal.gate, where))


def _signal_threshold(value: float | None, gate: bool, where: str) -> Findings:
    field = f"{where}.pass_threshold"
    if gate and value is None:
        return [FieldError(field, "is required when the signal is gated")]
    if value is not None and not 0 <= value <= 1:
        return [FieldError(field, IN_UNIT)]
    return []


def _pricing(spec: EvaluationSpec, out: Findings) -> None:
    seen: set[tuple[str, str]] = set()
    for i, row in enumerate(spec.pricing.models if spec.pricing else []):
        path = f"{ROOT}.pricing.models[{i}]"
        for name in ("provider_key", "provider_model_id"):
            if not getattr(row, name):
                out.append(FieldError(f"{path}.{name}", "is required"))
        for name in ("input_cost_per_million_tokens", "output_cost_per_million_tokens"):
            if getattr(row, name) < 0:
                out.append(FieldError(f"{path}.{name}", NON_NEGATIVE))
        pair = (row.provider_key, row.provider_model_id)
        if all(pair):
            if pair in seen:
                out.append(FieldError(path, "must be unique by provider_key and "
                                            "provider_model_id"))
            seen.add(pair)


def _scorecard(spec: EvaluationSpec, out: Findings) -> None:
    card, path = spec.scorecard, f"{ROOT}.scorecard"
    if card.pass_threshold is not None:
        if card.strategy == "binary":
            out.append(FieldError(f"{path}.pass_threshold", "must not be set for binary "
                                  "strategy; use per-dimension pass_threshold instead"))
        elif not 0 <= card.pass_threshold <= 1:
            out.append(FieldError(f"{path}.pass_threshold", IN_UNIT))
    if card.strategy == "hybrid" and not any(d.gate for d in card.dimensions):
        out.append(FieldError(f"{path}.strategy",
                              "hybrid strategy requires at least one gated dimension"))


def _judge_mode(spec: EvaluationSpec, out: Findings) -> None:
    """``judge_mode`` × ``llm_judges`` coherence."""
    path = f"{ROOT}.llm_judges"
    if spec.judge_mode == "deterministic" and spec.llm_judges:
        out.append(FieldError(path, "must be empty when judge_mode is deterministic"))
    if spec.judge_mode in ("llm_judge", "hybrid") and not spec.llm_judges:
        out.append(FieldError(path, "must contain at least one judge when judge_mode is "
                                    f"{spec.judge_mode}"))
