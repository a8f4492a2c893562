"""Sealed runs: one command run last, apart from everything the candidate left behind.

An optional primitive of the driver contract (:mod:`sandbox.base`). A driver that offers it
is a :class:`Sealing`; the evaluation side asks ``isinstance(sandbox, Sealing)`` first. A
:meth:`Sealing.run_sealed` must, in this order:

1. stop every process the candidate started, and cut the sandbox off every network;
2. take a census of the workspace within ``tree_entries`` entries and ``tree_depth``
   levels (more, or deeper, withholds the run: :attr:`Withheld.found`);
3. remove from the workspace everything neither a regular file nor a directory (a link
   could name the sealed command's own files), empty ``/tmp`` and ``/dev/shm`` (and hold
   none of ``/tmp``'s space), then make the workspace readable and read-only to everyone;
   what cannot be removed withholds the run (:attr:`Withheld.found`);
4. make a fresh directory the candidate never saw, with a ``home`` the command may write,
   and write :attr:`SealedRun.files` into it;
5. run :attr:`SealedRun.argv` there, as a uid that is neither the candidate's, the
   keeper's nor the judge's (:data:`SEALED_USER`, or the next free one below it), under
   its own timeout, an address-space limit of :attr:`SealedRun.memory_bytes`, no network
   and the output caps, with the profile's environment updated by :attr:`SealedRun.env`.

Every step before the command is bounded in time; one that passes its bound over the
candidate's tree withholds the run (:attr:`Withheld.step_timeout_s`), and so does a
sandbox that ended by its limits (:attr:`Withheld.ended_by`). The answer is a
:data:`SealedOutcome`: the command's :class:`~sandbox.results.ExecResult`, why it was
withheld, or why it could not be prepared; what that means is the caller's to say.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from evalfleet.sandbox.command import SeedFile
from evalfleet.sandbox.results import ExecResult

#: The sealed command's uid:gid (distinct from the default candidate, keeper and judge).
SEALED_USER = "65533:65533"
#: How a sandbox ended, in :attr:`Withheld.ended_by`.
MEMORY, DEADLINE = "memory", "deadline"


@dataclass(frozen=True)
class SealedRun:
    """What to run sealed. The fresh directory's absolute path is the driver's to choose:
    :attr:`argv` and :attr:`env` are given it."""

    files: tuple[SeedFile, ...]
    """Written into the fresh directory (paths relative to it), readable to the command."""
    argv: Callable[[str], Sequence[str]]
    """The command, given the fresh directory (its working directory)."""
    env: Callable[[str], Mapping[str, str]]
    """Set over the profile's environment, given the fresh directory."""
    timeout_s: float
    memory_bytes: int
    """The command's address-space limit (``ulimit -v``)."""
    output_cap_bytes: int | None = None
    """Cap per output stream; ``None`` means the profile's default."""
    name: str = "sealed"
    """Names the fresh directory (``/tmp/.<name>-<random>`` in the Docker driver) and,
    in the fake, the command's scripted result."""


@dataclass(frozen=True)
class Withheld:
    """The command did not run, and what the candidate left or did is why. At most one
    field is set; none when the sandbox was ended by :meth:`~sandbox.base.Sandbox.terminate`
    before anything was found."""

    ended_by: str | None = None
    """The sandbox ended by a limit: :data:`MEMORY` or :data:`DEADLINE`."""
    found: str = ""
    """What the preparation found, in its own words: a bound the workspace passed, or
    something left that could not be removed."""
    step_timeout_s: float | None = None
    """A step of the preparation passed this bound walking the candidate's tree."""


@dataclass(frozen=True)
class Unprepared:
    """The command did not run, and the sandbox, not the candidate, is why (a tool missing
    in the image, a step that failed without a reason of the candidate's)."""

    why: str


#: What a sealed run gives back.
SealedOutcome = ExecResult | Withheld | Unprepared


@runtime_checkable
class Sealing(Protocol):
    """A driver that can run a command sealed, as this module says."""

    def run_sealed(self, run: SealedRun) -> SealedOutcome:
        """Seal the workspace, write ``run.files`` into a fresh directory and run
        ``run.argv`` there as its own uid, as the module says.

        Raises:
            SandboxConfigError: ``run.files`` pass ``seed_bytes``.
            SandboxUnavailable: the engine or the container is gone.
        """
        ...
