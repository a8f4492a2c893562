"""The sandbox's public steps, as the stages of a plan (:mod:`sandbox.plan_steps`) see them.

:class:`~sandbox.base.Sandbox` provides every one; the stages need nothing else of it, so
they name this protocol rather than the class that calls them (which would make the two
modules import each other).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from evalfleet.sandbox.command import Command, SeedFile
from evalfleet.sandbox.execution import CodeExecution, TestRun
from evalfleet.sandbox.profile import Profile
from evalfleet.sandbox.results import ExecResult
from evalfleet.sandbox.room import Probe


class Steps(Protocol):
    """What a plan's stages call on a sandbox (each documented on :class:`Sandbox`)."""

    profile: Profile

    def exec(self, command: Command) -> ExecResult: ...

    def write_files(self, files: Sequence[SeedFile]) -> None: ...

    def write_and_exec(self, files: Sequence[SeedFile], command: Command) -> ExecResult: ...

    def stop_candidate(self) -> None: ...

    def stop_and_write(self, files: Sequence[SeedFile]) -> None: ...

    def stop_write_and_test(self, files: Sequence[SeedFile], spec: CodeExecution,
                            *, clean: bool = False) -> TestRun: ...

    def code_execution(self, spec: CodeExecution, *, index: int = 0,
                       clean: bool = False) -> TestRun: ...

    def export_files(self, paths: Sequence[str]) -> tuple[SeedFile, ...]: ...

    def probe_command(self, probe: Probe) -> Command: ...

    def write_room(self, files: Sequence[SeedFile]) -> None: ...
