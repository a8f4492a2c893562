"""The in-memory sandbox: the stub every unit test of the pipeline uses.

:class:`FakeSandbox` passes the same contract suite as the Docker driver
(:mod:`sandbox.testing.contract`). Its commands run in :mod:`sandbox.testing.fake_shell`
over an in-memory file tree; ``script`` maps a command (the shell string, or the argv
joined by spaces) to a fixed :class:`~sandbox.results.ExecResult` for anything the tiny
shell does not know (``pytest -q`` → "3 passed", an OOM kill, …).
"""

from __future__ import annotations

import contextlib
import itertools
import shlex
from collections.abc import Callable, Mapping, Sequence

from evalfleet.sandbox import envprobe, room
from evalfleet.sandbox.base import Sandbox
from evalfleet.sandbox.command import Command, SeedFile
from evalfleet.sandbox.errors import SandboxConfigError, SandboxUnavailable, SeedRefused
from evalfleet.sandbox.paths import relative_to, workspace_path
from evalfleet.sandbox.profile import Profile
from evalfleet.sandbox.results import ExecResult, FileRead, Listing
from evalfleet.sandbox.sealed import SealedOutcome, SealedRun, Unprepared
from evalfleet.sandbox.seed_limits import entries, unholdable
from evalfleet.sandbox.testing.fake_fs import FakeFS
from evalfleet.sandbox.testing.fake_programs import PROGRAMS
from evalfleet.sandbox.testing.fake_shell import (
    Exit,
    Overflow,
    Shell,
    Timeout,
    run_script,
    run_tokens,
)

Scripted = ExecResult | Callable[[Command], ExecResult]
_ids = itertools.count(1)


class FakeSandbox(Sandbox):
    """A sandbox in memory: files in a dict, commands in a tiny shell."""

    def __init__(self, profile: Profile, *, script: Mapping[str, Scripted] | None = None,
                 run_id: str = "") -> None:
        super().__init__(profile)
        self.run_id = run_id
        self.script = dict(script or {})
        self.fs = FakeFS(capacity=profile.limits.workspace_bytes)
        self.jobs: list[list[str]] = []
        self.executed: list[Command] = []
        self.closed = False
        self._id = f"fake-{next(_ids)}"

    @property
    def id(self) -> str:
        """``fake-N``."""
        return self._id

    def write_files(self, files: Sequence[SeedFile]) -> None:
        """Write files into the in-memory workspace.

        Raises:
            SandboxConfigError: a path breaks the rules or the files pass ``seed_bytes`` or
                ``seed_files``.
            SeedRefused: the workspace cannot hold them (full, a name too long, a path
                both a file and a directory).
            SandboxUnavailable: the sandbox was closed.
        """
        self._check_open()
        limits, workdir = self.profile.limits, self.profile.workdir
        if sum(len(f.data) for f in files) > limits.seed_bytes:
            raise SandboxConfigError("seed files exceed the seed_bytes limit", sandbox_id=self.id)
        names = [relative_to(workspace_path(f.path, workdir), workdir) for f in files]
        if entries(names) > limits.seed_files:
            raise SandboxConfigError("seed files exceed the seed_files limit", sandbox_id=self.id)
        found = unholdable(files, workdir, limits)
        if found is not None:  # what tar in a real sandbox fails on
            raise SeedRefused(f"cannot write {found}", sandbox_id=self.id)
        for file in files:
            path = workspace_path(file.path, workdir)
            self.fs.remove(path)
            if not self.fs.write(path, file.data, mode=file.mode):
                raise SeedRefused("no space left in the workspace", sandbox_id=self.id)

    def exec(self, command: Command) -> ExecResult:
        """Run a command: scripted result first, else the tiny shell.

        Raises:
            SandboxUnavailable: the sandbox was closed.
        """
        self._check_open()
        if command.argv[:3] == ("sh", "-c", envprobe.SCRIPT) and "environment" not in self.script:
            return self._environment()  # not recorded: the fake answers it without a shell
        self.executed.append(command)
        if command.user is not None:
            self.jobs.clear()  # a command with a user of its own stops everything first
        self._tick_jobs()
        key = command.argv if isinstance(command.argv, str) else shlex.join(command.argv)
        if command.argv[:3] == ("sh", "-c", envprobe.SCRIPT):
            key = "environment"
        inner = command.argv[2] if command.as_argv()[:2] in {("sh", "-c"), ("sh", "-lc")} else key
        scripted = self.script.get(key, self.script.get(str(inner)))
        if scripted is not None:
            return scripted if isinstance(scripted, ExecResult) else scripted(command)
        return self._interpret(command)

    def stop_candidate(self) -> None:
        """Forget every background job.

        Raises:
            SandboxUnavailable: the sandbox was closed.
        """
        self._check_open()
        self.jobs.clear()

    def read_file(self, path: str, limit: int) -> FileRead:
        """Read a regular file; a link is reported as not captured.

        Raises:
            SandboxUnavailable: the sandbox was closed.
        """
        self._check_open()
        kind = self.fs.kind(path)
        if kind != "file":
            error = None if kind is None else f"not captured: not a regular file ({kind})"
            return FileRead(exists=False, error=error)
        data = self.fs.files[path]
        return FileRead(exists=True, size=len(data), content=data[:limit])

    def export_files(self, paths: Sequence[str]) -> tuple[SeedFile, ...]:
        """Stop, then copy the regular files at or below ``paths`` (workspace-relative).

        Raises:
            SandboxUnavailable: the sandbox was closed.
        """
        self.stop_candidate()
        workdir = self.profile.workdir.rstrip("/")
        found: list[SeedFile] = []
        for path in paths:
            where = f"{workdir}/{path.strip('/')}"
            found += [SeedFile(name[len(workdir) + 1:], data, room.DELIVERABLE_MODE)
                      for name, data in sorted(self.fs.files.items())
                      if name == where or name.startswith(where + "/")]
        return tuple(_capped(found, self.profile.limits.seed_bytes))

    def write_room(self, files: Sequence[SeedFile]) -> None:
        """Write ``files`` under the judge's room (its parts made first).

        Raises:
            SandboxConfigError: a path breaks the rules or the room's size is passed.
            SandboxUnavailable: the sandbox was closed.
        """
        self._check_open()
        for part in room.PARTS:
            self.fs.mkdir(part)
        if sum(len(f.data) for f in files) > self.profile.limits.room_bytes:
            raise SandboxConfigError("files exceed the judge's room", sandbox_id=self.id)
        for file in files:
            self.fs.write(workspace_path(file.path, room.ROOM), file.data, mode=file.mode)

    def read_room_file(self, path: str, limit: int) -> FileRead:
        """Read one file of the judge's room (the fake has one user).

        Raises:
            SandboxUnavailable: the sandbox was closed.
        """
        return self.read_file(path, limit)

    def list_dir(self, path: str, max_entries: int) -> Listing:
        """List the in-memory tree below ``path``.

        Raises:
            SandboxUnavailable: the sandbox was closed.
        """
        self._check_open()
        if self.fs.kind(self.fs.resolve(path)) != "dir":
            return Listing(error=f"not a directory: {path}")
        root = self.fs.resolve(path)
        depth = self.profile.limits.tree_depth
        everything = self.fs.walk(root)
        entries = [e for e in everything if e.path[len(root):].count("/") <= depth]
        deep = len(entries) < len(everything)
        return Listing(entries=tuple(entries[:max_entries]),
                       truncated=len(entries) > max_entries or deep,
                       error=f"entries deeper than {depth} levels are not listed" if deep
                       else None)

    def _environment(self) -> ExecResult:
        """The environment probe's answer (:data:`~sandbox.envprobe.SCRIPT`) when none is
        scripted as ``script["environment"]``: every tool found, the workspace writable,
        its free space what the in-memory tree has left, in whole KiB (as ``df -Pk`` gives
        it; rounded up)."""
        free_kib = -(-(self.fs.capacity - self.fs.used()) // 1024)  # rounded up
        df = ("Filesystem 1024-blocks Used Available Capacity Mounted on\n"
              f"fake 0 0 {free_kib} 0% /")
        return ExecResult(exit_code=0, stdout=f"writable\n@df\n{df}\n".encode())

    def run_sealed(self, run: SealedRun) -> SealedOutcome:
        """A sealed run (the fake is a :class:`~sandbox.sealed.Sealing`, without the
        isolation: no census, seal, uid or address-space limit): stop every job, write
        ``run.files`` into ``/tmp/.<name>-<id>`` (with a ``home``), then ``script[run.name]``
        if scripted, else the command in the tiny shell, in that directory.

        Raises:
            SandboxConfigError: ``run.files`` pass ``seed_bytes``.
            SandboxUnavailable: the sandbox was closed.
        """
        self._check_open()
        self.jobs.clear()
        directory = f"/tmp/.{run.name}-{self._id}"
        if sum(len(f.data) for f in run.files) > self.profile.limits.seed_bytes:
            raise SandboxConfigError("sealed files exceed the seed_bytes limit",
                                     sandbox_id=self.id)
        self.fs.mkdir(f"{directory}/home")
        for file in run.files:
            if not self.fs.write(workspace_path(file.path, directory), file.data,
                                 mode=file.mode):
                return Unprepared(f"cannot write {file.path}: no space left")
        command = Command(argv=tuple(run.argv(directory)), workdir=directory,
                          timeout_s=run.timeout_s, output_cap_bytes=run.output_cap_bytes,
                          env=run.env(directory))
        self.executed.append(command)
        scripted = self.script.get(run.name)
        if scripted is not None:
            return scripted if isinstance(scripted, ExecResult) else scripted(command)
        if command.argv[0] not in PROGRAMS:
            return ExecResult(exit_code=None, error=f"the fake sandbox cannot run "
                              f"{command.argv[0]} (script it as \"{run.name}\")")
        return self._interpret(command)

    def close(self) -> None:
        """Drop everything."""
        self.closed = True
        self.jobs.clear()

    def _check_open(self) -> None:
        if self.closed:
            raise SandboxUnavailable("the sandbox is closed", sandbox_id=self.id)

    def _shell(self, command: Command) -> Shell:
        limits = self.profile.limits
        workdir = command.workdir or self.profile.workdir
        return Shell(fs=self.fs, programs=PROGRAMS, cwd=workdir, background=self.jobs,
                     cap=command.output_cap_bytes or limits.output_cap_bytes,
                     timeout_s=command.timeout_s or limits.exec_timeout_s,
                     uid=int((command.user or self.profile.hardening.user).split(":")[0]))

    def _interpret(self, command: Command) -> ExecResult:
        shell = self._shell(command)
        if self.fs.kind(shell.cwd) != "dir":
            return ExecResult(exit_code=None, error=f"working directory {shell.cwd} is missing")
        status: int | None = None
        timed_out = False
        try:
            status = run_script(shell, shlex.join(command.as_argv()), command.stdin)
        except Overflow:
            status = 137
        except Timeout:
            timed_out = True
        return ExecResult(exit_code=status, stdout=bytes(shell.stdout), stderr=bytes(shell.stderr),
                          timed_out=timed_out, stdout_truncated=shell.stdout_truncated,
                          stderr_truncated=shell.stderr_truncated,
                          duration_s=min(shell.elapsed_s, shell.timeout_s))

    def _tick_jobs(self) -> None:
        """Background jobs get to run once before every command, as a loop would."""
        for job in list(self.jobs):
            shell = self._shell(Command(argv="true"))
            shell.background = []
            with contextlib.suppress(Overflow, Timeout, Exit):
                run_tokens(shell, job, b"")


def _capped(files: list[SeedFile], max_bytes: int) -> list[SeedFile]:
    """The leading ``files`` that fit in ``max_bytes``."""
    kept, total = [], 0
    for file in files:
        total += len(file.data)
        if total > max_bytes:
            break
        kept.append(file)
    return kept


class FakeFactory:
    """Hands out :class:`FakeSandbox` objects; remembers them for assertions."""

    def __init__(self, script: Mapping[str, Scripted] | None = None) -> None:
        self.script = dict(script or {})
        self.sandboxes: list[FakeSandbox] = []

    def acquire(self, profile: Profile, *, run_id: str) -> FakeSandbox:
        """A new fake sandbox for ``run_id``."""
        sandbox = FakeSandbox(profile, script=self.script, run_id=run_id)
        self.sandboxes.append(sandbox)
        return sandbox
