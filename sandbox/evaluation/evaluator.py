"""The Clawdiators custom-script evaluator step (:mod:`sandbox.evaluator` has its protocol),
run where the driver offers the isolation it needs."""

from __future__ import annotations

from evalfleet.sandbox.base import Sandbox
from evalfleet.sandbox.evaluation.judge import trusted_env
from evalfleet.sandbox.evaluator import EvaluatorHost, EvaluatorRecord, EvaluatorRun, not_run


def run(sandbox: Sandbox, spec: EvaluatorRun) -> EvaluatorRecord:
    """The evaluator's record: run by a driver that can isolate it
    (:class:`~sandbox.evaluator.EvaluatorHost`), with a ``PATH`` the candidate cannot write
    in; else a record that it did not run.

    Raises:
        SandboxUnavailable: the engine or the container is gone.
    """
    if not isinstance(sandbox, EvaluatorHost):
        return not_run(spec, f"the {type(sandbox).__name__} driver cannot run evaluators")
    return sandbox.run_evaluator(spec, trusted=trusted_env(sandbox))
