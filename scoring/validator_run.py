"""Running one declared validator: decode config, resolve evidence, check (§4.3, §5, §6)."""

from __future__ import annotations

from .evidence import Evidence
from .references import Resolution, resolve
from .results import ValidatorResult
from .spec import EvaluationSpec, ValidatorDecl
from .validators import lookup
from .validators.base import CheckInput, Kind, Outcome, classify


def run_validator(decl: ValidatorDecl, spec: EvaluationSpec, evidence: Evidence) -> ValidatorResult:
    """Evaluate one validator against the evidence."""
    kind = lookup(decl.type)
    if kind is None:
        outcome = Outcome.error("unsupported validator type", "pack_error")
        return _result(decl, "unknown", outcome, None, None)
    config, problem = kind.decode_config(decl.config)
    if problem is not None:
        return _result(decl, kind.name, Outcome.error(problem, "pack_error"), None, None)
    target = resolve(decl.target, evidence) if kind.resolves_target else Resolution("available")
    expected = _expected(kind, decl, evidence)
    outcome = _decide(kind, decl, config, target, expected, evidence, spec)
    return _result(decl, kind.name, outcome, target.value, expected.value)


def _expected(kind: Kind, decl: ValidatorDecl, evidence: Evidence) -> Resolution:
    if kind.expected != "required":
        return Resolution("available")
    return resolve(decl.expected_from, evidence)


def _decide(kind: Kind, decl: ValidatorDecl, config: object, target: Resolution,
            expected: Resolution, evidence: Evidence, spec: EvaluationSpec) -> Outcome:
    for resolution in (target, expected):
        if resolution.state == "error":
            return Outcome.error(resolution.reason or "evidence reference error")
    if not kind.handles_missing_target and not target.available:
        return Outcome.unavailable(target.reason or expected.reason or "evidence is unavailable")
    if not expected.available:
        return Outcome.unavailable(expected.reason or "evidence is unavailable")
    given = CheckInput(decl, config, target.value, expected.value, target, evidence, spec)
    return kind.check(given)


def _result(decl: ValidatorDecl, type_name: str, outcome: Outcome,
            actual: str | None, expected: str | None) -> ValidatorResult:
    return ValidatorResult(
        key=decl.key, type=decl.type, state=outcome.state,
        outcome_class=classify(outcome, type_name), verdict=outcome.verdict,
        normalized_score=outcome.score, target=decl.target, expected_from=decl.expected_from,
        actual_value=actual, expected_value=expected, reason=outcome.reason,
        evidence=dict(outcome.evidence),
    )
