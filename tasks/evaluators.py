"""The Clawdiators layer in the worker: the evaluator step, the submission manifest and the
constraint check that runs before any container starts.

Everything the layer scores comes back as events (``grader.evaluator.completed``,
``grader.submission.manifest``), so a stored run re-scores offline.
"""

from __future__ import annotations

import json

from sandbox.evaluator import EvaluatorRun
from scoring import EvaluationSpec
from scoring.clawdiators.constraints import Violation, violations
from scoring.clawdiators.runinfo import MANIFEST_EVENT, run_info
from scoring.run.events import decode_events
from scoring.run.evidence import extract_evidence

from .messages import RunRequest, SubmissionFile
from .recording import Recorder

MiB = 1024 * 1024


def evaluator_run(spec: EvaluationSpec, output_cap: int | None = None) -> EvaluatorRun | None:
    """The sandbox step for the spec's ``clawdiators.evaluator``, if it declares one."""
    declared = spec.clawdiators.evaluator if spec.clawdiators else None
    if declared is None:
        return None
    truth = json.dumps(declared.ground_truth, sort_keys=True).encode()
    return EvaluatorRun(runtime=declared.runtime, script=declared.script, ground_truth=truth,
                        timeout_s=declared.timeout_ms / 1000,
                        memory_bytes=declared.memory_mb * MiB, output_cap_bytes=output_cap)


def early_violations(spec: EvaluationSpec, request: RunRequest) -> list[Violation]:
    """Constraint violations the submitted trajectory already shows (no container needed)."""
    if spec.clawdiators is None or spec.clawdiators.constraints is None:
        return []
    decoded = decode_events(list(request.submission.events or []))
    return violations(spec, extract_evidence(decoded), run_info(decoded))


def enforced(spec: EvaluationSpec) -> bool:
    """Whether a violation found before the run ends it without a sandbox."""
    constraints = spec.clawdiators.constraints if spec.clawdiators else None
    return bool(constraints and constraints.enforce)


def record_manifest(recorder: Recorder, spec: EvaluationSpec, request: RunRequest) -> None:
    """``grader.submission.manifest``: the submitted files' paths and sizes."""
    if spec.clawdiators is None:
        return
    files = [{"path": path, "size": _size(item)}
             for path, item in sorted(request.submission.files.items())]
    recorder.add(MANIFEST_EVENT, {"files": files})


def record_skipped(recorder: Recorder, found: list[Violation]) -> None:
    """The run ended before a sandbox started: ``system.run.failed`` with the reasons."""
    reason = "constraint violated before the run: " + "; ".join(v.message for v in found)
    recorder.add("system.run.failed", {"reason": reason, "error": reason})


def _size(item: str | SubmissionFile) -> int:
    try:
        return len((SubmissionFile(content=item) if isinstance(item, str) else item).data())
    except ValueError:
        return 0
