"""Applying the layer to a scored run: submission checks, the speed gate, constraint
violations and the harness warning. A spec without the layer passes through unchanged."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..run.evidence import Evidence
from ..run.records import DimensionResult
from ..spec.models import EvaluationSpec
from .constraints import Violation, violations
from .runinfo import RunInfo
from .sources import SOURCES
from .submission import Finding, run_checks

HARNESS_NOTE = "token and call efficiency score 0; trajectory constraints are unverified"


@dataclass(frozen=True)
class Layer:
    dimensions: list[DimensionResult]
    findings: list[Finding] = field(default_factory=list)
    violations: list[Violation] = field(default_factory=list)
    harness_warning: str | None = None


def uses_layer(spec: EvaluationSpec) -> bool:
    """Whether the spec declares anything of the layer."""
    return spec.clawdiators is not None or any(
        d.source in SOURCES for d in spec.scorecard.dimensions)


def apply(spec: EvaluationSpec, evidence: Evidence, info: RunInfo,
          dimensions: list[DimensionResult]) -> Layer:
    """The layer's view of a run whose dimensions are scored (declaration order)."""
    if not uses_layer(spec):
        return Layer(dimensions)
    checks = spec.clawdiators.submission_checks if spec.clawdiators else []
    findings = run_checks(checks, info.files, evidence.final_output)
    zeroed = gate_speed(spec, zero_guarded(dimensions, findings))
    harness = None if info.verified else f"{info.unverified_reason}: {HARNESS_NOTE}"
    return Layer(zeroed, findings, violations(spec, evidence, info), harness)


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
