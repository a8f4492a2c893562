"""The steps of a :class:`~sandbox.plan.Plan` after its environment checks, in order: the
pack's setup, the candidate's commands, then the tests (next to the candidate's files, or
in the judge's clean room: :mod:`sandbox.room`). :func:`~sandbox.evaluation.plans.run_plan`
calls them.

Where the driver batches (:mod:`sandbox.batching`), seeding rides with the first command,
the test files with the first test, and the driver hears what follows whatever the answer:
after the last command, the first test and the captures (when that test is the only one);
after the only test, the captures. Never in the clean room, whose deliverables are copied
out first.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Sequence

from evalfleet.sandbox import batching, room
from evalfleet.sandbox.base import Sandbox
from evalfleet.sandbox.batching import FirstExec, Follower, Reads
from evalfleet.sandbox.command import Command, SeedFile
from evalfleet.sandbox.errors import SeedRefused
from evalfleet.sandbox.evaluation import judge
from evalfleet.sandbox.execution import TestRun, refused_run
from evalfleet.sandbox.paths import relative_to, workspace_path
from evalfleet.sandbox.plan import Plan
from evalfleet.sandbox.results import ExecResult


def setup(sandbox: Sandbox, plan: Plan) -> tuple[ExecResult, ...]:
    """The pack's files, then its setup commands (the files ride with the first) up to
    the first that fails, all before anything of the candidate's is seeded."""
    results: list[ExecResult] = []
    for index, command in enumerate(plan.setup_commands):
        results.append(batching.write_and_exec(sandbox, plan.setup_files, command)
                       if index == 0 else sandbox.exec(command))
        if not results[-1].ok:
            break
    if plan.setup_files and not plan.setup_commands:
        sandbox.write_files(plan.setup_files)
    return tuple(results)


def commands(sandbox: Sandbox, plan: Plan, reads: Reads | None = None
             ) -> tuple[ExecResult, ...]:
    """Seed files, then the commands (the seeding rides with the first command);
    ``reads``: the captures' reads, announced after the last command."""
    results: list[ExecResult] = []
    for index, command in enumerate(plan.commands):
        with batching.ahead(sandbox, _after_command(sandbox, plan, command, reads)):
            results.append(batching.write_and_exec(sandbox, plan.files, command)
                           if index == 0 else sandbox.exec(command))
        if plan.stop_on_command_failure and not results[-1].ok:
            break
    if not plan.commands:
        sandbox.write_files(plan.files)
    return tuple(results)


def tests(sandbox: Sandbox, plan: Plan, reads: Reads | None = None
          ) -> tuple[tuple[TestRun, ...], tuple[ExecResult, ...]]:
    """The tests and the probes' results: in the clean room when the plan names its
    deliverables, else in the workspace (:mod:`sandbox.room`)."""
    if plan.deliverables:
        return _clean_room_tests(sandbox, plan)
    if not plan.tests:
        _seed_workspace_tests(sandbox, plan.test_files)
        return (), ()
    try:
        with batching.ahead(sandbox, _captures_after_test(plan, reads)):
            first = judge.first_test(sandbox, plan.test_files, plan.tests[0])
    except SeedRefused as refused:
        return tuple(refused_run(spec, refused) for spec in plan.tests), ()
    return (first, *_later_tests(sandbox, plan, clean=False)), ()


def _after_command(sandbox: Sandbox, plan: Plan, command: Command,
                   reads: Reads | None) -> tuple[Follower, ...]:
    """What follows ``command`` whatever its answer: after the plan's last command (when it
    comes only there), the first test in the workspace and the captures after it."""
    if plan.deliverables or not plan.tests or not _is_last(command, plan.commands):
        return ()
    test = judge.judge_command(sandbox, plan.tests[0], index=0, clean=False)
    return (FirstExec(plan.test_files, test), *_captures_after_test(plan, reads))


def _captures_after_test(plan: Plan, reads: Reads | None) -> tuple[Follower, ...]:
    """The captures, when the workspace's first test is the plan's only one."""
    if plan.deliverables or len(plan.tests) != 1 or not plan.checks or reads is None:
        return ()
    return (reads,)


def _is_last(step: object, steps: Sequence[object]) -> bool:
    """Whether ``step`` is the last of ``steps`` and comes only there."""
    return bool(steps) and steps[-1] is step and sum(each is step for each in steps) == 1


def _seed_workspace_tests(sandbox: Sandbox, files: Sequence[SeedFile]) -> None:
    """Stop the candidate and write the test files; a refusal leaves nothing to run."""
    with contextlib.suppress(SeedRefused):
        batching.stop_and_write(sandbox, files)


def _later_tests(sandbox: Sandbox, plan: Plan, *, clean: bool) -> list[TestRun]:
    return [judge.code_execution(sandbox, spec, index=index, clean=clean)
            for index, spec in enumerate(plan.tests) if index > 0]


def _clean_room_tests(sandbox: Sandbox, plan: Plan) -> tuple[tuple[TestRun, ...],
                                                    tuple[ExecResult, ...]]:
    """Copy the deliverables out (the candidate stopped), run the probes as the
    candidate, then the tests as the judge in a room holding only the test files,
    the copies and the probes' outputs."""
    delivered = sandbox.export_files(plan.deliverables)
    probed = [(probe, sandbox.exec(judge.probe_command(sandbox, probe)))
              for probe in plan.probes]
    files = [*room.in_room(_relative(sandbox, plan.test_files), room.TESTS),
             *room.in_room(delivered, room.DELIVERABLES),
             *(f for probe, result in probed for f in room.probe_files(probe, result))]
    results = tuple(result for _, result in probed)
    if not plan.tests:
        sandbox.stop_candidate()
        sandbox.write_room(files)
        return (), results
    first = judge.first_test(sandbox, files, plan.tests[0], clean=True)
    return (first, *_later_tests(sandbox, plan, clean=True)), results


def _relative(sandbox: Sandbox, files: Sequence[SeedFile]) -> list[SeedFile]:
    """``files`` with paths relative to the workspace (as the room's tests see them)."""
    workdir = sandbox.profile.workdir
    return [dataclasses.replace(f, path=relative_to(workspace_path(f.path, workdir),
                                                    workdir)) for f in files]
