"""Running one declared validator: decode config, resolve evidence, check (docs/scoring.md §4.3,
§5, §6)."""

from __future__ import annotations

from dataclasses import replace

from ..compat.goquote import quote
from ..record.evidence import Evidence
from ..record.references import Resolution, resolve, resolve_source
from ..spec.models import EvaluationSpec, ValidatorDecl
from ..validators import lookup
from ..validators.base import NESTED_TOO_DEEPLY, CheckInput, Kind, Outcome, classify
from .records import ValidatorResult


def run_validator(decl: ValidatorDecl, spec: EvaluationSpec, evidence: Evidence) -> ValidatorResult:
    """Evaluate one validator against the evidence."""
    kind = lookup(decl.type)
    if kind is None:
        outcome = Outcome.error(f"unsupported validator type {quote(decl.type)}")
        return _result(decl, "unknown", outcome, None, None)
    config, problem = kind.decode_config(decl.config)
    if problem is not None:  # only for a spec that skipped validation
        reason = f"parse {kind.name} config: {problem}"
        failed = Outcome.error(reason) if kind.resolves_target and kind.name != "postcondition" \
            else Outcome.broken(reason)
        return _result(decl, kind.name, failed, None, None)
    target = resolve(decl.target, evidence) if kind.resolves_target else Resolution("available")
    expected = _expected(kind, decl, evidence)
    outcome = _decide(kind, decl, config, target, expected, evidence, spec)
    if _read_target(kind, target, expected):
        outcome = replace(outcome, source=resolve_source(decl.target, evidence))
    return _result(decl, kind.name, outcome, target.value, expected.value)


def _read_target(kind: Kind, target: Resolution, expected: Resolution) -> bool:
    """Whether the check read the target, so the result points at its event (AgentClash
    sets ``Source`` once both sides resolved, or the target did for the kinds that judge
    a missing file themselves)."""
    if not kind.resolves_target or target.state == "error" or expected.state == "error":
        return False
    return kind.handles_missing_target or (target.available and expected.available)


def _expected(kind: Kind, decl: ValidatorDecl, evidence: Evidence) -> Resolution:
    if kind.expected != "required":
        return Resolution("available")
    return resolve(decl.expected_from, evidence)


def _decide(kind: Kind, decl: ValidatorDecl, config: object, target: Resolution,
            expected: Resolution, evidence: Evidence, spec: EvaluationSpec) -> Outcome:
    for resolution in (target, expected):
        if resolution.state == "error":
            return Outcome.broken(resolution.reason or "evidence reference error")
    if not kind.handles_missing_target and not target.available:
        return Outcome.unavailable(target.reason or expected.reason or "evidence is unavailable")
    if not expected.available:
        return Outcome.unavailable(expected.reason or "evidence is unavailable")
    given = CheckInput(decl, config, target.value, expected.value, target, evidence, spec)
    try:
        return kind.check(given)
    except RecursionError:  # Go's stack grows where Python's ends: the candidate's answer
        return Outcome.error(NESTED_TOO_DEEPLY)  # nested that deep is its own doing


def _result(decl: ValidatorDecl, type_name: str, outcome: Outcome,
            actual: str | None, expected: str | None) -> ValidatorResult:
    return ValidatorResult(
        key=decl.key, type=decl.type, state=outcome.state,
        outcome_class=classify(outcome, type_name), verdict=outcome.verdict,
        normalized_score=outcome.score, target=decl.target, expected_from=decl.expected_from,
        actual_value=actual, expected_value=expected, reason=outcome.reason,
        evidence=dict(outcome.evidence),
        source=dict(outcome.source) if outcome.source is not None else None,
    )
