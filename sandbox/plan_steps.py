"""The steps of a :class:`~sandbox.plan.Plan` after its environment checks, in order: the
pack's setup, the candidate's commands, then the tests (next to the candidate's files, or
in the judge's clean room: :mod:`sandbox.room`). :meth:`~sandbox.base.Sandbox.run_plan`
calls them; they use only the sandbox's public steps.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Sequence

from evalfleet.sandbox import room
from evalfleet.sandbox.command import SeedFile
from evalfleet.sandbox.errors import SeedRefused
from evalfleet.sandbox.execution import TestRun, refused_run
from evalfleet.sandbox.paths import relative_to, workspace_path
from evalfleet.sandbox.plan import Plan
from evalfleet.sandbox.results import ExecResult
from evalfleet.sandbox.steps import Steps as Sandbox


def setup(sandbox: Sandbox, plan: Plan) -> tuple[ExecResult, ...]:
    """The pack's files, then its setup commands (the files ride with the first) up to
    the first that fails, all before anything of the candidate's is seeded."""
    results: list[ExecResult] = []
    for index, command in enumerate(plan.setup_commands):
        results.append(sandbox.write_and_exec(plan.setup_files, command) if index == 0
                       else sandbox.exec(command))
        if not results[-1].ok:
            break
    if plan.setup_files and not plan.setup_commands:
        sandbox.write_files(plan.setup_files)
    return tuple(results)


def commands(sandbox: Sandbox, plan: Plan) -> tuple[ExecResult, ...]:
    """Seed files, then the commands (the seeding rides with the first command)."""
    results: list[ExecResult] = []
    for index, command in enumerate(plan.commands):
        results.append(sandbox.write_and_exec(plan.files, command) if index == 0
                       else sandbox.exec(command))
        if plan.stop_on_command_failure and not results[-1].ok:
            break
    if not plan.commands:
        sandbox.write_files(plan.files)
    return tuple(results)


def tests(sandbox: Sandbox, plan: Plan) -> tuple[tuple[TestRun, ...],
                                              tuple[ExecResult, ...]]:
    """The tests and the probes' results: in the clean room when the plan names its
    deliverables, else in the workspace (:mod:`sandbox.room`)."""
    if plan.deliverables:
        return _clean_room_tests(sandbox, plan)
    if not plan.tests:
        _seed_workspace_tests(sandbox, plan.test_files)
        return (), ()
    try:
        first = sandbox.stop_write_and_test(plan.test_files, plan.tests[0])
    except SeedRefused as refused:
        return tuple(refused_run(spec, refused) for spec in plan.tests), ()
    return (first, *_later_tests(sandbox, plan, clean=False)), ()


def _seed_workspace_tests(sandbox: Sandbox, files: Sequence[SeedFile]) -> None:
    """Stop the candidate and write the test files; a refusal leaves nothing to run."""
    with contextlib.suppress(SeedRefused):
        sandbox.stop_and_write(files)


def _later_tests(sandbox: Sandbox, plan: Plan, *, clean: bool) -> list[TestRun]:
    return [sandbox.code_execution(spec, index=index, clean=clean)
            for index, spec in enumerate(plan.tests) if index > 0]


def _clean_room_tests(sandbox: Sandbox, plan: Plan) -> tuple[tuple[TestRun, ...],
                                                    tuple[ExecResult, ...]]:
    """Copy the deliverables out (the candidate stopped), run the probes as the
    candidate, then the tests as the judge in a room holding only the test files,
    the copies and the probes' outputs."""
    delivered = sandbox.export_files(plan.deliverables)
    probed = [(probe, sandbox.exec(sandbox.probe_command(probe))) for probe in plan.probes]
    files = [*room.in_room(_relative(sandbox, plan.test_files), room.TESTS),
             *room.in_room(delivered, room.DELIVERABLES),
             *(f for probe, result in probed for f in room.probe_files(probe, result))]
    results = tuple(result for _, result in probed)
    if not plan.tests:
        sandbox.stop_candidate()
        sandbox.write_room(files)
        return (), results
    first = sandbox.stop_write_and_test(files, plan.tests[0], clean=True)
    return (first, *_later_tests(sandbox, plan, clean=True)), results


def _relative(sandbox: Sandbox, files: Sequence[SeedFile]) -> list[SeedFile]:
    """``files`` with paths relative to the workspace (as the room's tests see them)."""
    workdir = sandbox.profile.workdir
    return [dataclasses.replace(f, path=relative_to(workspace_path(f.path, workdir),
                                                    workdir)) for f in files]
