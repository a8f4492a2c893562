"""The driver contract: what a sandbox driver (the Docker driver, the fake) implements.

It speaks sandboxes only: processes, files, the judge's room, limits, bytes and
listings. Nothing here knows a capture rule, a test or a plan; the evaluation side
(:mod:`sandbox.evaluation`) composes these primitives into AgentClash's captures,
``code_execution`` tests, the plan's order and the Clawdiators evaluator, the same way
for every driver.

To write a driver, subclass :class:`Sandbox`, implement its abstract members (each
docstring says what it must do and raise) and hand sandboxes out through a
:class:`SandboxFactory`. Optional members have working defaults. A driver that can do
several steps in one round trip also implements :class:`~sandbox.batching.Batching`; one
that can run a command sealed off from the candidate's leavings, a
:class:`~sandbox.sealed.Sealing` (the Clawdiators evaluator needs it).
:mod:`sandbox.testing.contract` holds the checks every driver passes; the fake
(:mod:`sandbox.testing.fake`) is the smallest complete driver.

Users: the candidate's commands run as ``profile.hardening.user`` (a command's ``user``
``None``), the pack's tests as ``profile.hardening.judge_user``. The judge's room
(:data:`~sandbox.room.ROOM`) is the judge's alone.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable, Mapping, Sequence
from types import TracebackType
from typing import Protocol, TypeVar

from evalfleet.sandbox.command import Command, SeedFile
from evalfleet.sandbox.profile import Profile
from evalfleet.sandbox.results import ExecResult, FileRead, Listing

T = TypeVar("T")


class Sandbox(ABC):
    """One started sandbox, used by exactly one run, then closed."""

    def __init__(self, profile: Profile) -> None:
        self.profile = profile

    @property
    @abstractmethod
    def id(self) -> str:
        """A stable identifier (the container id for Docker)."""

    @abstractmethod
    def exec(self, command: Command) -> ExecResult:
        """Run one process and wait for it; every outcome of the process is a result.

        The command runs as ``command.user`` (``None``: the candidate's user), in
        ``command.workdir`` (``None``: the workspace), with the profile's environment
        updated by ``command.env``, ``command.stdin`` on its standard input, killed after
        ``timeout_s`` (``timed_out``) and each output stream cut at ``output_cap_bytes``
        (``stdout_truncated``/``stderr_truncated``; ``None`` fields take the profile's
        limits). A missing working directory or program is ``error`` with no exit code. A
        command with a user of its own first stops every process left in the sandbox; as
        the judge's user it finds the room's parts made and no file at its ``REPORT``.

        Raises:
            SandboxUnavailable: the engine or the container is gone.
        """

    @abstractmethod
    def write_files(self, files: Sequence[SeedFile]) -> None:
        """Write files into the workspace as the candidate's user (parents created, modes
        applied, whatever is in their way replaced).

        Raises:
            SandboxConfigError: a path breaks the rules (``..``, outside the workspace) or
                the files pass ``seed_bytes`` or ``seed_files``.
            SeedRefused: the workspace cannot hold them (full, a name too long, a path both
                a file and a directory).
            SandboxUnavailable: the engine or the container is gone.
        """

    @abstractmethod
    def stop_candidate(self) -> None:
        """Kill every process the candidate's commands started (the sandbox stays up).

        Raises:
            SandboxUnavailable: the engine or the container is gone.
        """

    @abstractmethod
    def read_file(self, path: str, limit: int) -> FileRead:
        """Read a regular file (never through a link): ``exists``, its full ``size`` and
        its first ``limit`` bytes; anything else at ``path`` is ``exists=False`` with an
        ``error``, a missing path with none.

        Raises:
            SandboxUnavailable: the engine or the container is gone.
        """

    @abstractmethod
    def list_dir(self, path: str, max_entries: int) -> Listing:
        """List everything below ``path`` (recursively, ``tree_depth`` levels down), in
        path order, at most ``max_entries`` entries; ``truncated`` when entries were left
        out, ``error`` when the listing failed or went no deeper (keeping what it found).

        Raises:
            SandboxUnavailable: the engine or the container is gone.
        """

    @abstractmethod
    def export_files(self, paths: Sequence[str]) -> tuple[SeedFile, ...]:
        """Stop the candidate, then copy out the regular files at (or below) ``paths`` in
        the workspace, as the candidate reads them; links and special files are left
        behind, missing paths skipped, at most ``seed_bytes`` in all. Paths relative to
        the workspace, modes :data:`~sandbox.room.DELIVERABLE_MODE`.

        Raises:
            SandboxUnavailable: the engine or the container is gone.
        """

    @abstractmethod
    def write_room(self, files: Sequence[SeedFile]) -> None:
        """Write ``files`` (paths relative to :data:`~sandbox.room.ROOM`) into the judge's
        room as the judge, its parts (:data:`~sandbox.room.PARTS`) created.

        Raises:
            SandboxConfigError: a path breaks the rules or the total passes ``room_bytes``.
            SandboxUnavailable: the engine or the container is gone.
        """

    @abstractmethod
    def read_room_file(self, path: str, limit: int) -> FileRead:
        """Read one regular file of the judge's room as the judge (``limit`` bytes), as
        :meth:`read_file` does.

        Raises:
            SandboxUnavailable: the engine or the container is gone.
        """

    @abstractmethod
    def close(self) -> None:
        """Remove the sandbox and everything it owns; safe to call twice, never raises.
        A closed sandbox raises ``SandboxUnavailable`` on every other call."""

    def terminate(self) -> None:
        """End the sandbox now, from any thread (the run was cancelled): a step under way
        and every later one fail or find it ended, and :meth:`close` removes it rather
        than hand it back for reuse. Never raises. The default is :meth:`close`; a driver
        whose ``close`` is not safe beside a running step overrides it."""
        self.close()

    @property
    def deadline_exceeded(self) -> bool:
        """Whether the sandbox's wall deadline has ended it."""
        return False

    @property
    def runtime(self) -> str:
        """The OCI runtime isolating the sandbox (``""`` when the driver has none)."""
        return self.profile.runtime or ""

    @property
    def image_id(self) -> str:
        """The id of the image the sandbox runs (``""`` when the driver has none)."""
        return ""

    @property
    def supervisor(self) -> str:
        """The build of the supervisor that runs the sandbox's steps (``""``: none)."""
        return ""

    @property
    def command_path(self) -> str | None:
        """The ``PATH`` a command gets when it sets none (the profile's, else the image's);
        ``None`` where the driver does not know the image's environment."""
        return None

    def usage(self) -> Mapping[str, float | None]:
        """What this run has used of the sandbox (``peak_memory_bytes``, ``cpu_seconds``),
        where known; a figure that is not this run's own alone is ``None``.

        Raises nothing: a driver that cannot tell returns an empty mapping.
        """
        return {}

    def usage_unavailable(self) -> str:
        """Why :meth:`usage` is empty or has a ``None`` (called only then)."""
        return f"the {type(self).__name__} driver does not measure usage"

    def pristine(self, key: Hashable, measure: Callable[[], T]) -> T:
        """``measure()``, taken before anything of the run is written. A driver whose
        sandboxes serve several runs (reset in between, verified) may answer from an
        earlier run's measure of the same ``key`` instead.

        Raises:
            whatever ``measure`` raises.
        """
        return measure()

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.close()


class SandboxFactory(Protocol):
    """Gives out started sandboxes (cold, or from a warm pool)."""

    def acquire(self, profile: Profile, *, run_id: str) -> Sandbox:
        """A started, never-used sandbox for ``run_id``; the caller closes it.

        Raises:
            SandboxConfigError: the profile cannot work (image missing, bad limits).
            SandboxUnavailable: the engine is not there.
        """
        ...
