"""The Clawdiators layer in the worker: the evaluator step and the submission manifest.

Everything the layer scores comes back as events (``grader.evaluator.completed``,
``grader.submission.manifest``), so a stored run re-scores offline. Its check before any
container starts is scoring's one pre-run check (:func:`scoring.run.prerun.prerun_check`).
"""

from __future__ import annotations

import json

from evalfleet.sandbox.evaluator import EvaluatorRun
from evalfleet.sandbox.paths import seeded_as
from evalfleet.sandbox.profile import WORKSPACE
from evalfleet.scoring import EvaluationSpec
from evalfleet.scoring.record import event_types

from ..messages import RunRequest, SubmissionFile
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


def record_manifest(recorder: Recorder, spec: EvaluationSpec, request: RunRequest,
                    workspace: str = WORKSPACE) -> None:
    """``grader.submission.manifest``: the submitted files' paths (as the workspace holds
    them: ``./secrets/key`` is ``secrets/key``, which ``secrets/*`` forbids) and sizes."""
    if spec.clawdiators is None:
        return
    sizes = {seeded_as(path, workspace): _size(item)
             for path, item in request.submission.files.items()}
    files = [{"path": path, "size": size} for path, size in sorted(sizes.items())]
    recorder.add(event_types.SUBMISSION_MANIFEST, {"files": files})


def _size(item: str | SubmissionFile) -> int:
    try:
        return len((SubmissionFile(content=item) if isinstance(item, str) else item).data())
    except ValueError:
        return 0
