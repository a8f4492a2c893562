"""Load-time validation of an evaluation spec (scoring-semantics §3 and its appendix).

Every rule runs and every finding is collected (not fail-fast) as a :class:`FieldError`
with AgentClash's field path and message. Rules specific to one validator type live with
that type (:attr:`Kind.config_rules`); rules specific to LLM judges live with the judges.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from . import references
from .clawdiators.rules import layer_rules
from .dimension_rules import dimension_rules
from .errors import FieldError
from .judges.validation import judge_rules
from .rulekit import IN_UNIT, NON_NEGATIVE, POSITIVE, ROOT, Findings, threshold, unique_keys
from .spec import EvaluationSpec, ValidatorDecl
from .validators import lookup
from .validators.base import Kind

JUDGE_MODES = ("deterministic", "llm_judge", "hybrid")
STRATEGIES = ("weighted", "binary", "hybrid")
METRIC_TYPES = ("numeric", "text", "boolean")
CHECK_TYPES = ("file_capture", "directory_listing")
SIGNALS = ("recovery_behavior", "exploration_efficiency", "error_cascade", "scope_adherence",
           "confidence_calibration")
CALIBRATION = "is not supported until confidence reporting lands"


def validate_spec(spec: EvaluationSpec, root: str = ROOT) -> Findings:
    """All findings for ``spec``; an empty list means the spec is valid."""
    findings: Findings = []
    for rule in RULES:
        rule(spec, findings)
    if root != ROOT:
        findings = [f._replace(field=root + f.field.removeprefix(ROOT)) for f in findings]
    return findings


def _top_level(spec: EvaluationSpec, out: Findings) -> None:
    if not spec.name:
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


def _runtime_limits(spec: EvaluationSpec, out: Findings) -> None:
    limits, path = spec.runtime_limits, f"{ROOT}.runtime_limits"
    if limits is None:
        return
    for name in ("max_total_tokens", "max_cost_usd", "max_duration_ms"):
        value = getattr(limits, name)
        if value is not None and value <= 0:
            out.append(FieldError(f"{path}.{name}", POSITIVE))
    if limits.max_iterations is not None and not 1 <= limits.max_iterations <= 1000:
        out.append(FieldError(f"{path}.max_iterations", "must be between 1 and 1000"))


def _validators(spec: EvaluationSpec, out: Findings) -> None:
    unique_keys((v.key for v in spec.validators), lambda i: f"{ROOT}.validators[{i}]", out)
    for i, decl in enumerate(spec.validators):
        path = f"{ROOT}.validators[{i}]"
        kind = lookup(decl.type)
        if kind is None:
            out.append(FieldError(f"{path}.type", "is not a supported validator type"))
            out.extend(_reference(decl.target, f"{path}.target"))
            out.extend(_reference(decl.expected_from, f"{path}.expected_from"))
            continue
        out.extend(_config(kind, decl, path))
        out.extend(_target(kind, decl, path, spec))
        out.extend(_expected_from(kind, decl, path))


def _config(kind: Kind, decl: ValidatorDecl, path: str) -> Findings:
    if kind.config_required and decl.config is None:
        return [FieldError(f"{path}.config", f"{kind.name} config is required")]
    if kind.strictness != "strict":
        return []
    config, problem = kind.decode_config(decl.config)
    if problem is not None:
        return [FieldError(f"{path}.config", problem)]
    return kind.config_rules(config, f"{path}.config") if kind.config_rules else []


def _target(kind: Kind, decl: ValidatorDecl, path: str, spec: EvaluationSpec) -> Findings:
    field = f"{path}.target"
    if not decl.target:
        return [FieldError(field, "is required")]
    if kind.name == "tool_call_assertion":
        return [] if decl.target == "tool_calls" else [FieldError(field, 'must be "tool_calls"')]
    found = _reference(decl.target, field)
    if kind.needs_file_target and not decl.target.startswith("file:"):
        found.append(FieldError(field, "must use file: prefix for file validators"))
    return found or _check_reference(kind, decl, field, spec)


def _reference(value: str, field: str) -> Findings:
    """``is required`` when blank, else whether ``value`` is a supported evidence reference."""
    if not value:
        return [FieldError(field, "is required")]
    if not references.is_supported(value):
        return [FieldError(field, "must be a supported evidence reference")]
    return []


def _check_reference(kind: Kind, decl: ValidatorDecl, field: str,
                     spec: EvaluationSpec) -> Findings:
    if not decl.target.startswith("file:"):
        return []
    key = decl.target.removeprefix("file:").strip()
    check = spec.check(key)
    if kind.name == "postcondition" and not spec.post_execution_checks:
        return [FieldError(field, "requires at least one post_execution_check")]
    if check is None and (spec.post_execution_checks or kind.name == "code_execution"):
        return [FieldError(field, f'references unknown post_execution_check key "{key}"')]
    if kind.name == "code_execution" and check is not None and check.type != "file_capture":
        return [FieldError(field, "must reference a file_capture post_execution_check")]
    return []


def _expected_from(kind: Kind, decl: ValidatorDecl, path: str) -> Findings:
    field = f"{path}.expected_from"
    if kind.expected == "omitted":
        message = f"must be omitted for {kind.name} validators"
        return [FieldError(field, message)] if decl.expected_from else []
    if kind.expected == "ignored":
        return []
    return _reference(decl.expected_from, field)


def _checks(spec: EvaluationSpec, out: Findings) -> None:
    checks = spec.post_execution_checks
    unique_keys((c.key for c in checks), lambda i: f"{ROOT}.post_execution_checks[{i}]", out)
    for i, check in enumerate(checks):
        path = f"{ROOT}.post_execution_checks[{i}]"
        if check.type not in CHECK_TYPES:
            out.append(FieldError(f"{path}.type", "must be one of " + ", ".join(CHECK_TYPES)))
        if not check.path:
            out.append(FieldError(f"{path}.path", "is required"))
        if check.max_size_bytes is not None and check.max_size_bytes < 0:
            out.append(FieldError(f"{path}.max_size_bytes", NON_NEGATIVE))


def _metrics(spec: EvaluationSpec, out: Findings) -> None:
    unique_keys((m.key for m in spec.metrics), lambda i: f"{ROOT}.metrics[{i}]", out)
    for i, metric in enumerate(spec.metrics):
        path = f"{ROOT}.metrics[{i}]"
        if metric.type not in METRIC_TYPES:
            out.append(FieldError(f"{path}.type", "is not a supported metric type"))
        if not metric.collector:
            out.append(FieldError(f"{path}.collector", "is required"))
        elif metric.collector == "behavioral_confidence_calibration_score":
            out.append(FieldError(f"{path}.collector", CALIBRATION))


def _behavioral(spec: EvaluationSpec, out: Findings) -> None:
    block, path = spec.behavioral, f"{ROOT}.behavioral"
    if block is None:
        return
    if not block.signals:
        out.append(FieldError(f"{path}.signals", "must contain at least one signal"))
    unique_keys((s.key for s in block.signals), lambda i: f"{path}.signals[{i}]", out)
    for i, signal in enumerate(block.signals):
        where = f"{path}.signals[{i}]"
        if signal.key and signal.key not in SIGNALS:
            out.append(FieldError(f"{where}.key", "is not a supported behavioral signal"))
        elif signal.key == "confidence_calibration":
            out.append(FieldError(f"{where}.key", CALIBRATION))
        if signal.weight <= 0:
            out.append(FieldError(f"{where}.weight", POSITIVE))
        out.extend(threshold(signal.pass_threshold, signal.gate, f"{where}.pass_threshold"))


def _pricing(spec: EvaluationSpec, out: Findings) -> None:
    rows = spec.pricing.models if spec.pricing else []
    counts = Counter((r.provider_key, r.provider_model_id) for r in rows)
    seen: set[tuple[str, str]] = set()
    for i, row in enumerate(rows):
        path = f"{ROOT}.pricing.models[{i}]"
        for name in ("provider_key", "provider_model_id"):
            if not getattr(row, name):
                out.append(FieldError(f"{path}.{name}", "is required"))
        for name in ("input_cost_per_million_tokens", "output_cost_per_million_tokens"):
            if getattr(row, name) < 0:
                out.append(FieldError(f"{path}.{name}", NON_NEGATIVE))
        pair = (row.provider_key, row.provider_model_id)
        if counts[pair] > 1 and pair in seen:
            out.append(FieldError(path, "must be unique by provider_key and provider_model_id"))
        seen.add(pair)


def _judges(spec: EvaluationSpec, out: Findings) -> None:
    judges, path = spec.llm_judges, f"{ROOT}.llm_judges"
    unique_keys((j.key for j in judges), lambda i: f"{path}[{i}]", out)
    validator_keys = {v.key for v in spec.validators}
    metric_keys = {m.key for m in spec.metrics}
    for i, judge in enumerate(judges):
        if judge.key in validator_keys:
            out.append(FieldError(f"{path}[{i}].key", "collides with validator key"))
        if judge.key in metric_keys:
            out.append(FieldError(f"{path}[{i}].key", "collides with metric key"))
    if spec.judge_mode == "deterministic" and judges:
        out.append(FieldError(path, "must be empty when judge_mode is deterministic"))
    if spec.judge_mode in ("llm_judge", "hybrid") and not judges:
        message = f"must contain at least one judge when judge_mode is {spec.judge_mode}"
        out.append(FieldError(path, message))


def _scorecard(spec: EvaluationSpec, out: Findings) -> None:
    card, path = spec.scorecard, f"{ROOT}.scorecard"
    if card.pass_threshold is not None:
        if card.strategy == "binary":
            out.append(FieldError(f"{path}.pass_threshold", "must not be set for binary "
                                  "strategy; use per-dimension pass_threshold instead"))
        elif not 0 <= card.pass_threshold <= 1:
            out.append(FieldError(f"{path}.pass_threshold", IN_UNIT))
    if card.strategy == "hybrid" and not any(d.gate for d in card.dimensions):
        out.append(FieldError(f"{path}.dimensions",
                              "must contain at least one gate dimension for hybrid strategy"))
    limits = card.judge_limits
    if limits is not None:
        out.extend(_judge_limits(limits.max_samples_per_judge, limits.max_calls_usd,
                                 limits.max_tokens, f"{path}.judge_limits"))


def _judge_limits(samples: int | None, usd: float | None, tokens: int | None,
                  path: str) -> Findings:
    found: Findings = []
    if samples is not None and not 0 <= samples <= 10:
        found.append(FieldError(f"{path}.max_samples_per_judge", "must be between 0 and 10"))
    if usd is not None and usd < 0:
        found.append(FieldError(f"{path}.max_calls_usd", NON_NEGATIVE))
    if tokens is not None and tokens < 0:
        found.append(FieldError(f"{path}.max_tokens", NON_NEGATIVE))
    return found


RULES: tuple[Callable[[EvaluationSpec, Findings], None], ...] = (
    _top_level, _runtime_limits, _validators, _checks, _metrics, _behavioral, _pricing,
    _judges, judge_rules, dimension_rules, _scorecard, layer_rules,
)
