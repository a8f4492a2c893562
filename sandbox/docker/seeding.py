"""Writing files into the workspace as the candidate's uid, whatever the candidate left.

The files go in as a tar built on the host (:mod:`sandbox.docker.transfer`) and extracted
by ``tar`` in the sandbox after :data:`~sandbox.docker.scripts.CLEAR_FUNCTION` removed
whatever stood in their way (a directory or a link at a file's path, a file where a
directory must be). What still fails once ``tar`` ran — a full workspace, say — is the
candidate's doing (:class:`~sandbox.errors.SeedRefused`); a step that could not even start
is the sandbox's (:class:`~sandbox.errors.SandboxUnavailable`).
"""

from __future__ import annotations

import dataclasses
import secrets
from collections.abc import Sequence

from evalfleet.sandbox.command import Command, SeedFile
from evalfleet.sandbox.docker import outcome, scripts, stopping, transfer
from evalfleet.sandbox.docker.conduit import PAST_DEADLINE, Conduit, internal_request
from evalfleet.sandbox.docker.frames import STDIN_CHUNK
from evalfleet.sandbox.docker.stream import ExecRequest, RawExec, first_line
from evalfleet.sandbox.errors import SandboxUnavailable, SeedRefused
from evalfleet.sandbox.paths import relative_to, workspace_path

#: Exit status of a script that could not stop the candidate first.
NOT_STOPPED = 97
#: The most seed record bytes a request carries: the supervisor holds a request whole, in
#: the sandbox's memory, so more go as a tar on stdin, streamed in chunks of this size.
NATIVE_SEED_MAX = STDIN_CHUNK


def archive(conduit: Conduit, files: Sequence[SeedFile]) -> tuple[bytes, list[str]]:
    """A tar of ``files`` for the workspace, and their paths relative to it.

    Raises:
        SandboxConfigError: a path breaks the rules or the files pass ``seed_bytes`` or
            ``seed_files``.
    """
    workdir, limits = conduit.profile.workdir, conduit.profile.limits
    built = transfer.seed_archive(files, workdir, limits.seed_bytes, limits.seed_files)
    return built, [relative_to(workspace_path(f.path, workdir), workdir) for f in files]


def with_command(conduit: Conduit, files: Sequence[SeedFile], command: Command, *,
                 native: bool) -> tuple[str, ExecRequest]:
    """The request that writes ``files`` and becomes ``command`` (in the workspace, as the
    candidate), and the nonce of its driver script: :data:`scripts.SEED_THEN_EXEC` with a
    tar on stdin, or (``native``, protocol 5, up to :data:`NATIVE_SEED_MAX`; nonce ``""``)
    the supervisor's own seed records, a failure of which is a start error.

    Raises:
        SandboxConfigError: a path breaks the rules or the files pass ``seed_bytes`` or
            ``seed_files``.
    """
    workdir, limits = conduit.profile.workdir, conduit.profile.limits
    limit, most = limits.seed_bytes, limits.seed_files
    records = transfer.seed_records(files, workdir, limit, most) if native else b""
    if native and len(records) <= NATIVE_SEED_MAX:
        request = outcome.request(conduit, command, command.as_argv(), stdin=b"")
        return "", dataclasses.replace(request, null_stdin=True, seed=records)
    nonce = secrets.token_hex(8)
    argv = ("sh", "-c", scripts.SEED_THEN_EXEC, "sh", workdir, nonce, *command.as_argv())
    return nonce, outcome.request(conduit, command, argv,
                                  stdin=transfer.seed_archive(files, workdir, limit, most))


def with_test(conduit: Conduit, files: Sequence[SeedFile], command: Command, *, root: str,
              limit: int, bare: bool, most: int | None = None) -> tuple[str, ExecRequest]:
    """The first test's request (``command``: the test as the judge) and the nonce of its
    driver script: ``bare`` (nothing to write or remove; nonce ``""``), the test itself
    with a null stdin; else :data:`scripts.SEED_THEN_TEST`, which writes ``files`` (at
    most ``limit`` bytes and ``most`` entries) into ``root`` (the workspace, or the judge's
    room) from a tar on stdin, enters the test's directory and becomes the test. Either
    stops every process first.

    Raises:
        SandboxConfigError: a path breaks the rules or the files pass a limit.
    """
    if bare:
        request = outcome.request(conduit, command, command.as_argv(), stdin=b"",
                                  stop_first=True)
        return "", dataclasses.replace(request, null_stdin=True)
    archive = transfer.seed_archive(files, root, limit, most) if files else b""
    nonce = secrets.token_hex(8)
    argv = ("sh", "-c", scripts.SEED_THEN_TEST, "sh", root, nonce, "1" if files else "0",
            command.workdir or root, *command.as_argv())
    first = dataclasses.replace(command, workdir=root)
    return nonce, outcome.request(conduit, first, argv, stdin=archive, stop_first=True)


def extract(conduit: Conduit, files: Sequence[SeedFile]) -> None:
    """Write ``files`` (:data:`scripts.EXTRACT`).

    Raises:
        SandboxConfigError: a path breaks the rules or the total passes ``seed_bytes``.
        SeedRefused: ``tar`` ran and failed.
        SandboxUnavailable: the engine or the container is gone.
    """
    if not files:
        return
    built, paths = archive(conduit, files)
    argv = ("sh", "-c", scripts.EXTRACT, "sh", conduit.profile.workdir, *paths)
    check(conduit, _run(conduit, argv, built, stop_first=False))


def stop_and_extract(conduit: Conduit, files: Sequence[SeedFile]) -> bool:
    """Stop the candidate and write ``files`` in one request; ``False`` when the script
    could not stop the candidate (or start), for the caller to go step by step.

    Raises:
        SandboxConfigError: a path breaks the rules or the total passes ``seed_bytes``.
        SeedRefused: ``tar`` ran and failed.
        SandboxUnavailable: the engine or the container is gone.
    """
    built, paths = archive(conduit, files) if files else (b"", [])
    script = scripts.STOP_AND_EXTRACT if files else scripts.STOP
    raw = _run(conduit, ("sh", "-c", script, "sh", conduit.profile.workdir, *paths), built,
               stop_first=True)
    if raw.exit_code == 0 or conduit.ended:
        return True
    if not files or raw.exit_code in (NOT_STOPPED, None) or raw.start_error:
        return False
    check(conduit, raw)
    return True


def check(conduit: Conduit, raw: RawExec) -> None:
    """Raise if an extraction failed while the sandbox lives.

    Raises:
        SeedRefused: ``tar`` ran and failed.
        SandboxUnavailable: the script could not even start.
    """
    if raw.exit_code == 0 or conduit.ended:
        return
    if raw.timed_out:  # clearing what the candidate left in the way: a tree it made
        raise SeedRefused("writing the files took longer than their time bound",
                          sandbox_id=conduit.id)
    why = first_line(raw.stderr) or f"exit status {raw.exit_code}"
    if raw.start_error or raw.exit_code is None:
        raise SandboxUnavailable(f"seeding failed: {why}", sandbox_id=conduit.id)
    raise SeedRefused(why, sandbox_id=conduit.id)


def _run(conduit: Conduit, argv: Sequence[str], stdin: bytes, *, stop_first: bool) -> RawExec:
    request = internal_request(conduit.profile, argv, stdin=stdin, stop_first=stop_first)
    return conduit.run(request, stopping.stopper(conduit, request.user)) or PAST_DEADLINE
