"""Small builders for scoring unit tests: a minimal spec, events, one validator run."""

from __future__ import annotations

from typing import Any

from evalfleet.scoring.record.events import decode_events
from evalfleet.scoring.record.evidence import Evidence, extract_evidence
from evalfleet.scoring.run.records import ValidatorResult
from evalfleet.scoring.run.validator_run import run_validator
from evalfleet.scoring.spec.cases import Case
from evalfleet.scoring.spec.models import EvaluationSpec

T0 = "2026-01-01T00:00:00Z"


def spec_with(*validators: dict[str, Any], **extra: Any) -> EvaluationSpec:
    """A valid minimal spec around the given validator declarations."""
    body: dict[str, Any] = {
        "name": "test", "version_number": 1, "judge_mode": "deterministic",
        "validators": list(validators), "scorecard": {"dimensions": ["correctness"]},
    }
    body.update(extra)
    return EvaluationSpec.model_validate(body)


def completed(final_output: Any = None, **payload: Any) -> dict[str, Any]:
    """A ``system.run.completed`` event (with ``final_output`` when given)."""
    if final_output is not None:
        payload["final_output"] = final_output
    return {"type": "system.run.completed", "occurred_at": T0, "payload": payload}


def evidence_of(events: list[dict[str, Any]],
                cases: list[dict[str, Any]] | None = None) -> Evidence:
    """Evidence from plain event mappings and case mappings."""
    return extract_evidence(decode_events(events), [Case.model_validate(c) for c in cases or []])


def run_one(vtype: str, actual: str | None, expected: str | None = None, config: Any = None,
            *, target: str = "final_output", events: list[dict[str, Any]] | None = None,
            **extra: Any) -> ValidatorResult:
    """Run one validator of ``vtype`` on ``actual`` (the final output) vs ``expected``.

    ``expected`` becomes ``literal:<expected>``; pass ``events`` to replace the default
    single run-completed event, and ``extra`` for more spec fields (post_execution_checks).
    """
    decl: dict[str, Any] = {"key": "v", "type": vtype, "target": target, "config": config}
    if expected is not None:
        decl["expected_from"] = "literal:" + expected
    spec = spec_with(decl, **extra)
    evidence = evidence_of(events if events is not None else [completed(actual)])
    return run_validator(spec.validators[0], spec, evidence)
