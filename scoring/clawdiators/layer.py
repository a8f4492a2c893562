"""The layer as the core sees it (:data:`LAYER`, registered through :mod:`scoring.layers`),
and its hooks: applying it to a scored run (submission checks, the speed gate, constraint
violations and the harness warning) and the pre-run constraint check. A spec without the
layer passes through unchanged."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..layers import Additions, Adjusted, Layer
from ..record.evidence import Evidence
from ..run.records import DimensionResult
from ..run.scorecard import ConstraintViolation, SubmissionWarning
from ..spec.models import EvaluationSpec
from .constraints import Violation, violations
from .rules import layer_rules
from .runinfo import NAME, RunInfo, info_of, run_info
from .sources import COLLECTORS, SOURCES
from .submission import Finding, run_checks

HARNESS_NOTE = "token and call efficiency score 0; trajectory constraints are unverified"


@dataclass(frozen=True)
class Applied:
    """The layer's view of a run whose dimensions are scored."""

    dimensions: list[DimensionResult]
    findings: list[Finding] = field(default_factory=list)
    violations: list[Violation] = field(default_factory=list)
    harness_warning: str | None = None


def uses_layer(spec: EvaluationSpec) -> bool:
    """Whether the spec declares anything of the layer."""
    return spec.clawdiators is not None or any(
        d.source in SOURCES for d in spec.scorecard.dimensions)


def apply(spec: EvaluationSpec, evidence: Evidence, info: RunInfo,
          dimensions: list[DimensionResult]) -> Applied:
    """The layer's view of a run whose dimensions are scored (declaration order)."""
    if not uses_layer(spec):
        return Applied(dimensions)
    checks = spec.clawdiators.submission_checks if spec.clawdiators else []
    findings = run_checks(checks, info.files, evidence.final_output)
    zeroed = gate_speed(spec, zero_guarded(dimensions, findings))
    harness = None if info.verified else f"{info.unverified_reason}: {HARNESS_NOTE}"
    return Applied(zeroed, findings, violations(spec, evidence, info), harness)


def adjust(spec: EvaluationSpec, evidence: Evidence, reading: object,
           dimensions: list[DimensionResult]) -> Adjusted:
    """The core's hook: :func:`apply`, its findings as the scorecard fields of the layer."""
    layer = apply(spec, evidence, info_of(reading), dimensions)
    return Adjusted(layer.dimensions, Additions(
        [SubmissionWarning(severity=f.severity, check=f.check, message=f.message)
         for f in layer.findings],
        [ConstraintViolation(**v._asdict()) for v in layer.violations],
        layer.harness_warning))


def opted_in(spec: EvaluationSpec) -> bool:
    """A spec opts in with its ``clawdiators`` block."""
    return spec.clawdiators is not None


def enforced(spec: EvaluationSpec) -> bool:
    """Whether the spec asks for its constraints to end a run before it starts."""
    constraints = spec.clawdiators.constraints if spec.clawdiators else None
    return bool(constraints and constraints.enforce)


def prerun(spec: EvaluationSpec, evidence: Evidence, reading: object) -> str | None:
    """The constraints the submitted trajectory already breaks, on a spec that enforces
    them: the run ends as ``system.run.failed`` with this reason, without a sandbox."""
    found = violations(spec, evidence, info_of(reading)) if enforced(spec) else []
    if not found:
        return None
    return "constraint violated before the run: " + "; ".join(v.message for v in found)


def zero_guarded(dimensions: list[DimensionResult], findings: list[Finding]
                 ) -> list[DimensionResult]:
    """Each dimension guarded by a failed ``error`` check scores 0, saying which and why."""
    why: dict[str, str] = {}
    for finding in findings:
        for key in finding.guards if finding.severity == "error" else ():
            why.setdefault(key, f'submission check "{finding.check}" failed: {finding.message}')
    return [_zero(d, why[d.key]) if d.key in why else d for d in dimensions]


def gate_speed(spec: EvaluationSpec, dimensions: list[DimensionResult]
               ) -> list[DimensionResult]:
    """A gated speed dimension scores 0 unless a dimension it is gated on scores above 0."""
    scores = {d.key: d.score if d.state == "available" else None for d in dimensions}
    out = []
    for decl, result in zip(spec.scorecard.dimensions, dimensions, strict=True):
        gate = decl.speed.gate_on if decl.source == "speed" and decl.speed else []
        if gate and result.state == "available" and not any(scores.get(k) for k in gate):
            result = _zero(result, f"gated: {', '.join(gate)} scored 0")
        out.append(result)
    return out


def _zero(result: DimensionResult, reason: str) -> DimensionResult:
    return result.model_copy(update={"state": "available", "score": 0.0, "reason": reason})


LAYER = Layer(name=NAME, opted_in=opted_in, sources=SOURCES, collectors=COLLECTORS,
              rules=layer_rules, read=run_info, adjust=adjust,
              checks_before_run=enforced, prerun=prerun)
"""The Clawdiators layer, as registered with the core."""
