"""The Docker driver's half of the judge's room (:mod:`sandbox.room`): the deliverables
copied out as the candidate, the room written and its reports read as the judge.

Each is one request (through the supervisor, or ``exec``). The copy is a tar made in the
sandbox and filtered on the host (regular files under the deliverables only), then written
into the room by the judge: no process of the candidate's is alive by then, and nothing of
it can follow the files into a place the judge reads.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from evalfleet.sandbox import room
from evalfleet.sandbox.command import SeedFile
from evalfleet.sandbox.docker import scripts, stopping, transfer
from evalfleet.sandbox.docker.conduit import Conduit, internal_request
from evalfleet.sandbox.docker.stream import ExecRequest, first_line
from evalfleet.sandbox.errors import SandboxUnavailable
from evalfleet.sandbox.results import FileRead

#: Exit status of a script that could not stop the candidate (the host stops, retries).
NOT_STOPPED = 97


def export(conduit: Conduit, paths: Sequence[str]) -> tuple[SeedFile, ...] | None:
    """The deliverables at ``paths`` (relative to the workspace), or ``None`` when the
    script could not stop the candidate first (the caller stops it and asks again).

    Raises:
        SandboxUnavailable: the engine or the container is gone.
    """
    profile = conduit.profile
    limit = profile.limits.seed_bytes
    cap = limit + transfer.TAR_SLACK
    request = internal_request(profile, ("sh", "-c", scripts.EXPORT, "sh", str(cap),
                                         profile.workdir, *paths), cap=cap, stop_first=True)
    raw = conduit.run(request, stopping.stopper(conduit, request.user))
    if raw is None:
        return ()  # a limit ended the sandbox: nothing to deliver
    if raw.exit_code == NOT_STOPPED:
        return None
    return transfer.deliverables(raw.stdout, paths, limit)


def write(conduit: Conduit, files: Sequence[SeedFile]) -> None:
    """Write ``files`` (relative to the room) into the room, as the judge.

    Raises:
        SandboxConfigError: a path breaks the rules or the total passes the room's size.
        SandboxUnavailable: the engine, the container or ``tar`` failed.
    """
    archive = transfer.seed_archive(files, room.ROOM, conduit.profile.limits.room_bytes)
    request = as_judge(conduit, ("sh", "-c", scripts.ROOM_EXTRACT, "sh", room.ROOM),
                       stdin=archive)
    raw = conduit.run(request, stopping.stopper(conduit, request.user))
    if raw is not None and raw.exit_code != 0:
        raise SandboxUnavailable(f"the judge's room could not be written: "
                                 f"{first_line(raw.stderr)}", sandbox_id=conduit.id)


def read(conduit: Conduit, path: str, limit: int) -> FileRead:
    """One regular file of the room, read as the judge (links refused).

    Raises:
        SandboxUnavailable: the engine or the container is gone.
    """
    request = as_judge(conduit, transfer.capture_command(path), cap=limit + transfer.TAR_SLACK)
    raw = conduit.run(request, stopping.stopper(conduit, request.user))
    if raw is None:
        return FileRead(exists=False, error="the sandbox ended")
    if raw.exit_code != 0 and not raw.stdout_truncated:
        return FileRead(exists=False, error=first_line(raw.stderr) or "not readable")
    return transfer.read_archive(raw.stdout, path, limit)


def as_judge(conduit: Conduit, argv: Sequence[str], *, stdin: bytes = b"",
             cap: int = 1 << 20) -> ExecRequest:
    """A driver step as the judge, in the room, every other process stopped first."""
    request = internal_request(conduit.profile, argv, stdin=stdin, cap=cap, stop_first=True)
    return dataclasses.replace(request, user=conduit.profile.hardening.judge_user,
                               workdir=room.ROOM, env={"HOME": room.HOME})
