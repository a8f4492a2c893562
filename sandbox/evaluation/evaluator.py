"""The Clawdiators custom-script evaluator (docs/scoring.md §C5) as a sealed run
(:mod:`sandbox.sealed`), where the driver offers one.

What makes it Clawdiators' lives here, none of it in a driver: the script
(``evaluator.py`` or ``evaluator.sh``, run by ``python3`` or ``sh``) and
``ground-truth.json`` are the sealed run's files; its environment names them
(``$EVALUATOR_DIR``, ``$GROUND_TRUTH``) and the sealed workspace (``$SUBMISSION_DIR``),
with ``HOME`` and ``TMPDIR`` in the evaluator's own directory and a ``PATH`` the candidate
cannot write in; and the sealed run's outcome becomes an
:class:`~sandbox.evaluator.EvaluatorRecord`: the process's result, a withheld evaluator
(the candidate's doing: every dimension of it scores 0) or one that could not run (the
pack's error, or the driver's).
"""

from __future__ import annotations

from evalfleet.sandbox.base import Sandbox
from evalfleet.sandbox.command import SeedFile
from evalfleet.sandbox.evaluation.judge import trusted_env
from evalfleet.sandbox.evaluator import GROUND_TRUTH, INTERPRETERS, EvaluatorRecord, EvaluatorRun
from evalfleet.sandbox.results import ExecResult, text
from evalfleet.sandbox.sealed import (
    DEADLINE,
    MEMORY,
    SealedOutcome,
    SealedRun,
    Sealing,
    Unprepared,
    Withheld,
)

#: Names the evaluator's directory (``/tmp/.evaluator-<random>``).
NAME = "evaluator"


def run(sandbox: Sandbox, spec: EvaluatorRun) -> EvaluatorRecord:
    """The evaluator's record: run sealed by a driver that can
    (:class:`~sandbox.sealed.Sealing`), else a record that it did not run.

    Raises:
        SandboxConfigError: the script and ground truth pass ``seed_bytes``.
        SandboxUnavailable: the engine or the container is gone.
    """
    if not isinstance(sandbox, Sealing):
        return not_run(spec, f"the {type(sandbox).__name__} driver cannot run evaluators")
    outcome = sandbox.run_sealed(sealed_run(spec, sandbox.profile.workdir, trusted_env(sandbox)))
    return from_outcome(spec, outcome)


def sealed_run(spec: EvaluatorRun, workspace: str, trusted: dict[str, str]) -> SealedRun:
    """``spec`` as a sealed run: the script and ``ground-truth.json`` its files, the
    interpreter on the script its command; ``trusted``: what the fleet sets over every
    other environment (:func:`~sandbox.evaluation.judge.trusted_env`)."""
    files = (SeedFile(path=spec.script_name, content=spec.script, mode=0o644),
             SeedFile(path=GROUND_TRUTH, content=spec.ground_truth, mode=0o644))
    interpreter = INTERPRETERS.get(spec.runtime, "sh")
    return SealedRun(
        files=files, argv=lambda directory: (interpreter, f"{directory}/{spec.script_name}"),
        env=lambda directory: {**environment(spec, workspace, directory), **trusted},
        timeout_s=spec.timeout_s, memory_bytes=spec.memory_bytes,
        output_cap_bytes=spec.output_cap_bytes, name=NAME)


def environment(spec: EvaluatorRun, workspace: str, directory: str) -> dict[str, str]:
    """The pack's ``env``, then the fleet's: ``HOME`` and ``TMPDIR`` in the evaluator's
    own directory, never ``/tmp``, where the candidate could have planted start-up
    hooks (``~/.local/lib/python3.X/site-packages/usercustomize.py``)."""
    home = f"{directory}/home"
    return {**spec.env, "SUBMISSION_DIR": workspace, "EVALUATOR_DIR": directory,
            "GROUND_TRUTH": f"{directory}/{GROUND_TRUTH}", "HOME": home, "TMPDIR": home,
            "PYTHONNOUSERSITE": "1", "PYTHONDONTWRITEBYTECODE": "1"}


def from_outcome(spec: EvaluatorRun, outcome: SealedOutcome) -> EvaluatorRecord:
    """The record of a sealed run's ``outcome``."""
    if isinstance(outcome, Withheld):
        return withheld(spec, withheld_why(outcome))
    if isinstance(outcome, Unprepared):
        return not_run(spec, f"could not prepare the evaluator: {outcome.why}")
    return record(spec, outcome)


def withheld_why(outcome: Withheld) -> str:
    """Why the evaluator was withheld, in words."""
    if outcome.ended_by == MEMORY:
        return "the sandbox was killed at its memory limit"
    if outcome.ended_by == DEADLINE:
        return "the sandbox's wall deadline passed"
    if outcome.step_timeout_s is not None:
        return (f"preparing the workspace took longer than {outcome.step_timeout_s:g} s "
                f"(the tree the submission left)")
    return outcome.found


def record(spec: EvaluatorRun, result: ExecResult) -> EvaluatorRecord:
    """Turn the evaluator's :class:`ExecResult` into its record."""
    return EvaluatorRecord(
        runtime=spec.runtime, exit_code=None if result.timed_out else result.exit_code,
        stdout=text(result.stdout), stderr=text(result.stderr), timed_out=result.timed_out,
        error=result.error or "", truncated=result.truncated,
        timeout_ms=int(spec.timeout_s * 1000), duration_s=result.duration_s)


def withheld(spec: EvaluatorRun, why: str) -> EvaluatorRecord:
    """A record for an evaluator the submission kept from running: it ended the sandbox
    (its wall deadline, or its memory under gVisor), left a tree past the census's bounds
    or a file that could not be removed. No error, and no scores line, so every dimension
    of the evaluator scores 0, the candidate's loss. Booked as the pack's error instead,
    the submission could turn its loss into no contest. ``why`` goes on stderr."""
    return EvaluatorRecord(runtime=spec.runtime, exit_code=None, stdout="",
                           stderr=f"[evalfleet] the evaluator did not run: {why}",
                           timeout_ms=int(spec.timeout_s * 1000))


def not_run(spec: EvaluatorRun, why: str) -> EvaluatorRecord:
    """A record for an evaluator the driver could not start."""
    return EvaluatorRecord(runtime=spec.runtime, exit_code=None, stdout="", stderr="",
                           error=why, timeout_ms=int(spec.timeout_s * 1000))
