"""``code_execution`` tests as the judge, and the probes' environment (:mod:`sandbox.room`).

A test runs as the judge's uid (every other process stopped first) in the §7.3 directory,
or in the clean room's tests; a test with a report hands back the report it wrote, read as
the judge. What a test's run is worth is scoring's to say.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from evalfleet.sandbox import batching, room
from evalfleet.sandbox.base import Sandbox
from evalfleet.sandbox.command import Command, SeedFile
from evalfleet.sandbox.execution import CodeExecution, TestRun, command_for_test
from evalfleet.sandbox.results import FileRead

#: The ``PATH`` left when every directory of the one commands get is the candidate's.
SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def code_execution(sandbox: Sandbox, spec: CodeExecution, *, index: int = 0,
                   clean: bool = False) -> TestRun:
    """Run the plan's ``index``-th test as the judge, in the workspace or the clean room
    (``clean``), with the report it wrote when it has one.

    Raises:
        SandboxUnavailable: the engine or the container is gone.
    """
    result = sandbox.exec(judge_command(sandbox, spec, index=index, clean=clean))
    return TestRun(spec, result, report(sandbox, spec, index))


def first_test(sandbox: Sandbox, files: Sequence[SeedFile], spec: CodeExecution, *,
               clean: bool = False) -> TestRun:
    """Stop the candidate, write ``files`` (into the workspace, or the judge's room when
    ``clean``), then run the plan's first test (in one round trip where the driver can).

    Raises:
        SandboxConfigError: a path breaks the rules or the total passes its limit.
        SeedRefused: the files could not be written into the workspace.
        SandboxUnavailable: the engine or the container is gone.
    """
    command = judge_command(sandbox, spec, index=0, clean=clean)
    result = batching.stop_write_and_exec(sandbox, files, command, room=clean)
    return TestRun(spec, result, report(sandbox, spec, 0))


def judge_command(sandbox: Sandbox, spec: CodeExecution, *, index: int, clean: bool) -> Command:
    """The test's command as the judge: its directory, caps and environment (in the clean
    room, a ``PATH`` of directories the candidate cannot write: :func:`trusted_env`; in the
    workspace, AgentClash's environment, untouched)."""
    test = command_for_test(spec, sandbox.profile.workdir)
    written = room.report_path(index) if spec.report else None
    return dataclasses.replace(
        test, user=sandbox.profile.hardening.judge_user,
        workdir=room.TESTS if clean else test.workdir,
        env={**test.env, **room.judge_env(clean=clean, report=written,
                                           imports=spec.imports_deliverables),
             **(trusted_env(sandbox) if clean else {})})


def report(sandbox: Sandbox, spec: CodeExecution, index: int) -> FileRead | None:
    """The report a test with one wrote (read as the judge), else ``None``."""
    if not spec.report:
        return None
    return sandbox.read_room_file(room.report_path(index),
                                  sandbox.profile.limits.output_cap_bytes)


def probe_command(sandbox: Sandbox, probe: room.Probe) -> Command:
    """A probe's command as it runs (as the candidate, in the workspace): the pack's, in an
    environment the submission cannot shape (:func:`sandbox.room.probe_env`,
    :func:`trusted_env`)."""
    command = probe.command
    return dataclasses.replace(
        command, env={**command.env, **room.probe_env(), **trusted_env(sandbox)})


def trusted_env(sandbox: Sandbox) -> dict[str, str]:
    """``PATH``: the one commands get, without the directories the candidate can write
    (:func:`sandbox.room.trusted_path`); empty where the driver does not know it."""
    given = sandbox.command_path
    if given is None:
        return {}
    return {"PATH": room.trusted_path(given, room.writable(sandbox.profile)) or SYSTEM_PATH}
