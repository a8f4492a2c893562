"""Batching: several steps of the contract in one round trip, where a driver offers it.

Each round trip to a sandbox costs far more than the work it carries (docs/architecture.md,
"Where the time goes"). A driver that can combine steps subclasses :class:`Batching`
instead of :class:`~sandbox.base.Sandbox`; the evaluation side calls the functions below,
which use the driver's combined step when it has one and the primitives one by one when
not. Every combined step must give exactly what the steps one by one give (the contract
suite runs both). A combined step that cannot go through falls back to the steps one by
one itself (:func:`write_then_exec`, :func:`stop_then_write`,
:func:`stop_write_then_exec`), except :meth:`Batching.stop_and_read`, which answers
``None``.
"""

from __future__ import annotations

import contextlib
from abc import abstractmethod
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from evalfleet.sandbox.base import Sandbox
from evalfleet.sandbox.command import Command, SeedFile
from evalfleet.sandbox.results import ExecResult, FileRead, Listing


@dataclass(frozen=True)
class ReadFile:
    """Read the regular file at ``path`` (absolute), at most ``limit`` bytes of it."""

    path: str
    limit: int


@dataclass(frozen=True)
class ListDir:
    """List below ``path`` (absolute) as :meth:`Sandbox.list_dir` does, under the
    profile's ``listing_entries``."""

    path: str


Read = ReadFile | ListDir


@dataclass(frozen=True)
class Reads:
    """A :meth:`Batching.stop_and_read` to come: ``reads`` under ``total_bytes``."""

    reads: tuple[Read, ...]
    total_bytes: int


@dataclass(frozen=True)
class FirstExec:
    """A :meth:`Batching.stop_write_and_exec` to come."""

    files: tuple[SeedFile, ...]
    command: Command
    room: bool = False


#: A step announced ahead (:meth:`Batching.ahead`).
Follower = Reads | FirstExec


class Batching(Sandbox):
    """A driver that does several steps of the contract in one round trip."""

    @abstractmethod
    def write_and_exec(self, files: Sequence[SeedFile], command: Command) -> ExecResult:
        """:meth:`write_files`, then :meth:`exec`.

        Raises:
            as :meth:`write_files` and :meth:`exec`.
        """

    @abstractmethod
    def stop_and_write(self, files: Sequence[SeedFile]) -> None:
        """:meth:`stop_candidate`, then :meth:`write_files`.

        Raises:
            as :meth:`write_files`.
        """

    @abstractmethod
    def stop_write_and_exec(self, files: Sequence[SeedFile], command: Command, *,
                            room: bool = False) -> ExecResult:
        """:meth:`stop_candidate`, write ``files`` (into the workspace, or into the judge's
        room when ``room``), then :meth:`exec` ``command``.

        Raises:
            as :meth:`write_files` (or :meth:`write_room`) and :meth:`exec`.
        """

    @abstractmethod
    def stop_and_read(self, reads: Sequence[Read],
                      total_bytes: int) -> tuple[FileRead | Listing, ...] | None:
        """:meth:`stop_candidate`, then each read in order, the files under one total: a
        file's limit is ``min(its limit, total_bytes - the full sizes of the files found
        before it)`` (none below 0). ``None`` when the combined step could not be made:
        the caller then reads one by one.

        Raises:
            SandboxUnavailable: the engine or the container is gone.
        """

    def ahead(self, followers: Sequence[Follower]) -> contextlib.AbstractContextManager[None]:
        """While in this context, the caller's next step will be followed by ``followers``
        (in order), whatever that step's answer: the driver may send them ahead. Optional:
        the default ignores them."""
        return contextlib.nullcontext()


def write_and_exec(sandbox: Sandbox, files: Sequence[SeedFile], command: Command) -> ExecResult:
    """:meth:`Batching.write_and_exec` where the driver has it, else step by step."""
    if isinstance(sandbox, Batching):
        return sandbox.write_and_exec(files, command)
    return write_then_exec(sandbox, files, command)


def stop_and_write(sandbox: Sandbox, files: Sequence[SeedFile]) -> None:
    """:meth:`Batching.stop_and_write` where the driver has it, else step by step."""
    if isinstance(sandbox, Batching):
        sandbox.stop_and_write(files)
    else:
        stop_then_write(sandbox, files)


def stop_write_and_exec(sandbox: Sandbox, files: Sequence[SeedFile], command: Command, *,
                        room: bool = False) -> ExecResult:
    """:meth:`Batching.stop_write_and_exec` where the driver has it, else step by step."""
    if isinstance(sandbox, Batching):
        return sandbox.stop_write_and_exec(files, command, room=room)
    return stop_write_then_exec(sandbox, files, command, room=room)


def stop_and_read(sandbox: Sandbox, reads: Sequence[Read],
                  total_bytes: int) -> tuple[FileRead | Listing, ...] | None:
    """:meth:`Batching.stop_and_read` where the driver has it, else ``None``."""
    return sandbox.stop_and_read(reads, total_bytes) if isinstance(sandbox, Batching) else None


@contextlib.contextmanager
def ahead(sandbox: Sandbox, followers: Sequence[Follower]) -> Iterator[None]:
    """:meth:`Batching.ahead` where the driver has it."""
    if not isinstance(sandbox, Batching) or not followers:
        yield
        return
    with sandbox.ahead(followers):
        yield


def write_then_exec(sandbox: Sandbox, files: Sequence[SeedFile], command: Command) -> ExecResult:
    """:meth:`Batching.write_and_exec` one step at a time."""
    sandbox.write_files(files)
    return sandbox.exec(command)


def stop_then_write(sandbox: Sandbox, files: Sequence[SeedFile]) -> None:
    """:meth:`Batching.stop_and_write` one step at a time."""
    sandbox.stop_candidate()
    sandbox.write_files(files)


def stop_write_then_exec(sandbox: Sandbox, files: Sequence[SeedFile], command: Command, *,
                         room: bool = False) -> ExecResult:
    """:meth:`Batching.stop_write_and_exec` one step at a time."""
    if room:
        sandbox.stop_candidate()
        sandbox.write_room(files)
    else:
        stop_and_write(sandbox, files)  # a driver's combined step, where it has one
    return sandbox.exec(command)
