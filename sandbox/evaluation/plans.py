"""A whole :class:`~sandbox.plan.Plan` carried out in a sandbox, in its order: the
environment checks, the pack's setup, the candidate's turn, the tests, the captures and
the evaluator; one :class:`~sandbox.plan.PlanResult` with a record per step."""

from __future__ import annotations

import time
from typing import Any

from evalfleet.sandbox.base import Sandbox
from evalfleet.sandbox.capture import CaptureBudget
from evalfleet.sandbox.envprobe import EnvironmentProbe, EnvironmentReport
from evalfleet.sandbox.errors import SeedRefused
from evalfleet.sandbox.evaluation import checks, environment, evaluator, steps
from evalfleet.sandbox.execution import TestRun
from evalfleet.sandbox.plan import Plan, PlanResult
from evalfleet.sandbox.results import ExecResult


def run_plan(sandbox: Sandbox, plan: Plan) -> PlanResult:
    """Carry out ``plan`` and return one result. Files the sandbox refuses end it there:
    the pack's (:attr:`~sandbox.plan.PlanResult.setup_refused`) or the submission's
    (:attr:`~sandbox.plan.PlanResult.files_refused`).

    Raises:
        SandboxConfigError: a seed file breaks the rules.
        SandboxUnavailable: the engine or the container is gone.
    """
    started = time.monotonic()
    report = (None if plan.environment is None
              else environment.pristine(sandbox, plan.environment))
    if report is not None and report.problems:  # nothing seeded, nothing run
        return _result(sandbox, plan, started, (), (), (), environment=report)
    try:
        setup = steps.setup(sandbox, plan)
    except SeedRefused as refused:  # the pack's own files: the pack's error
        return _result(sandbox, plan, started, (), (), (), environment=report,
                       setup_refused=refused.detail)
    if setup and not setup[-1].ok:  # the pack's setup failed: the candidate never runs
        return _result(sandbox, plan, started, setup, (), (), environment=report,
                       files_written=len(plan.setup_files))
    report = _probe(sandbox, plan.environment_after_setup) or report
    if report is not None and report.problems:
        return _result(sandbox, plan, started, setup, (), (), environment=report,
                       files_written=len(plan.setup_files))
    return _candidates_turn(sandbox, plan, started, setup, report)


def _candidates_turn(sandbox: Sandbox, plan: Plan, started: float,
                     setup: tuple[ExecResult, ...],
                     report: EnvironmentReport | None) -> PlanResult:
    """The plan from the submission's files on, once the pack's part went well."""
    budget = CaptureBudget(plan.capture_total_bytes)
    reads = checks.reads_of(sandbox, plan.checks, budget)
    try:
        commands = setup + steps.commands(sandbox, plan, reads)
    except SeedRefused as refused:  # the submission's own files: the candidate's loss
        return _result(sandbox, plan, started, setup, (), (), environment=report,
                       files_written=len(plan.setup_files), files_refused=refused.detail)
    # In the clean room the candidate's code runs again (the probes) before the tests:
    # the captures come first, so that they show the files the tests judge.
    early = checks.collect(sandbox, plan.checks, budget, reads) if plan.deliverables else None
    tests, probes = steps.tests(sandbox, plan, reads)
    found = early if early is not None else checks.collect(sandbox, plan.checks, budget, reads)
    ran = evaluator.run(sandbox, plan.evaluator) if plan.evaluator else None
    return _result(sandbox, plan, started, commands, tests, found, evaluator=ran,
                   probes=probes, environment=report,
                   files_written=(len(plan.setup_files) + len(plan.files)
                                  + len(plan.test_files)))


def _probe(sandbox: Sandbox, probe: EnvironmentProbe | None) -> EnvironmentReport | None:
    """The probe's report, or None when the plan asked for none."""
    return environment.check(sandbox, probe) if probe is not None else None


def _result(sandbox: Sandbox, plan: Plan, started: float, commands: tuple[ExecResult, ...],
            tests: tuple[TestRun, ...], found: tuple[checks.Result, ...],
            **rest: Any) -> PlanResult:
    """The plan's result from its steps' records (``rest``: further PlanResult fields)."""
    usage = sandbox.usage()
    incomplete = not usage or any(value is None for value in usage.values())
    return PlanResult(
        sandbox_id=sandbox.id, profile=sandbox.profile.name, image=sandbox.profile.image,
        image_id=sandbox.image_id, runtime=sandbox.runtime, supervisor=sandbox.supervisor,
        limits=sandbox.profile.limits,
        commands=commands, tests=tests, checks=found,
        setup_commands=min(len(commands), len(plan.setup_commands)),
        commands_skipped=len(plan.setup_commands) + len(plan.commands) - len(commands),
        deadline_exceeded=sandbox.deadline_exceeded, duration_s=time.monotonic() - started,
        usage=usage, usage_unavailable=sandbox.usage_unavailable() if incomplete else "",
        **rest)
