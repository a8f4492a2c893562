"""The custom-script evaluator step (Clawdiators layer, docs/scoring.md §C5).

It runs last in a plan, after the candidate is stopped and everything is captured, so
nothing it does can change the run's other evidence. A driver must run it:

* as :data:`EVALUATOR_USER`, a uid that is neither the candidate's nor the keeper's, after
  making the submission's files read-only (and readable) to it;
* with the script and ``ground-truth.json`` written only now, into a fresh directory the
  candidate never saw (``$EVALUATOR_DIR``; ``$GROUND_TRUTH`` names the file), ``HOME``
  and ``TMPDIR`` in it, and the workspace as ``$SUBMISSION_DIR`` with every link removed
  (a link could name the evaluator's own files);
* under its own timeout (default 60 s), an address-space limit (default 512 MB), no network
  and the usual output caps.

That isolation is more than the driver contract asks of every driver: a driver that offers
it is an :class:`EvaluatorHost` (the Docker driver); :mod:`sandbox.evaluation.evaluator`
runs the step where one is.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from evalfleet.sandbox.results import ExecResult, text

#: The evaluator's uid:gid (distinct from the default candidate and keeper users).
EVALUATOR_USER = "65533:65533"
SCRIPT_NAMES = {"python": "evaluator.py", "shell": "evaluator.sh"}
INTERPRETERS = {"python": "python3", "shell": "sh"}
GROUND_TRUTH = "ground-truth.json"


@dataclass(frozen=True)
class EvaluatorRun:
    """What the pipeline asks for."""

    runtime: str
    """``python`` or ``shell``."""
    script: str
    ground_truth: bytes = b"null"
    timeout_s: float = 60.0
    memory_bytes: int = 512 * 1024 * 1024
    output_cap_bytes: int | None = None
    """Cap per output stream; ``None`` means the profile's default."""
    env: Mapping[str, str] = field(default_factory=dict)

    @property
    def script_name(self) -> str:
        return SCRIPT_NAMES.get(self.runtime, "evaluator")

    def argv(self, directory: str) -> tuple[str, ...]:
        """``ulimit -v`` then the interpreter on the script (``/tmp`` is ``noexec``)."""
        kib = str(self.memory_bytes // 1024)
        interpreter = INTERPRETERS.get(self.runtime, "sh")
        return ("sh", "-c", 'ulimit -v "$1" && shift && exec "$@"', "sh", kib, interpreter,
                f"{directory}/{self.script_name}")

    def environment(self, workspace: str, directory: str) -> dict[str, str]:
        """The pack's ``env``, then the fleet's: ``HOME`` and ``TMPDIR`` in the evaluator's
        own directory, never ``/tmp``, where the candidate could have planted start-up
        hooks (``~/.local/lib/python3.X/site-packages/usercustomize.py``)."""
        home = f"{directory}/home"
        return {**self.env, "SUBMISSION_DIR": workspace, "EVALUATOR_DIR": directory,
                "GROUND_TRUTH": f"{directory}/{GROUND_TRUTH}", "HOME": home, "TMPDIR": home,
                "PYTHONNOUSERSITE": "1", "PYTHONDONTWRITEBYTECODE": "1"}


@dataclass(frozen=True)
class EvaluatorRecord:
    """The ``grader.evaluator.completed`` record."""

    runtime: str
    exit_code: int | None
    stdout: str
    stderr: str
    timed_out: bool = False
    error: str = ""
    truncated: bool = False
    timeout_ms: int = 0
    duration_s: float = 0.0


def record(spec: EvaluatorRun, result: ExecResult) -> EvaluatorRecord:
    """Turn the evaluator's :class:`ExecResult` into its record."""
    return EvaluatorRecord(
        runtime=spec.runtime, exit_code=None if result.timed_out else result.exit_code,
        stdout=text(result.stdout), stderr=text(result.stderr), timed_out=result.timed_out,
        error=result.error or "", truncated=result.truncated,
        timeout_ms=int(spec.timeout_s * 1000), duration_s=result.duration_s)


def withheld(spec: EvaluatorRun, why: str) -> EvaluatorRecord:
    """A record for an evaluator the submission kept from running: it ended the sandbox
    (its wall deadline, or its memory under gVisor) or left a file that could not be
    removed. No error, and no scores line, so every dimension of the evaluator scores 0,
    the candidate's loss. Booked as the pack's error instead, the submission could turn
    its loss into no contest. ``why`` goes on stderr."""
    return EvaluatorRecord(runtime=spec.runtime, exit_code=None, stdout="",
                           stderr=f"[evalfleet] the evaluator did not run: {why}",
                           timeout_ms=int(spec.timeout_s * 1000))


def not_run(spec: EvaluatorRun, why: str) -> EvaluatorRecord:
    """A record for an evaluator the driver could not start."""
    return EvaluatorRecord(runtime=spec.runtime, exit_code=None, stdout="", stderr="",
                           error=why, timeout_ms=int(spec.timeout_s * 1000))


@runtime_checkable
class EvaluatorHost(Protocol):
    """A driver that can run the evaluator step as this module says."""

    def run_evaluator(self, spec: EvaluatorRun, *,
                      trusted: Mapping[str, str]) -> EvaluatorRecord:
        """Run ``spec`` isolated as the module says; ``trusted``: what the fleet sets over
        every other environment (a ``PATH`` the candidate cannot write in).

        Raises:
            SandboxUnavailable: the engine or the container is gone.
        """
        ...
