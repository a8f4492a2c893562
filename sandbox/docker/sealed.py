"""The Docker driver's sealed run (:mod:`sandbox.sealed`): count the candidate's tree, clear
what it left as the judge and as the candidate, seal the workspace, write the run's files
into a fresh directory and run its command there as its own uid, with no network.
"""

from __future__ import annotations

import dataclasses
import logging
import secrets

from evalfleet.sandbox.docker import scripts, stopping, transfer
from evalfleet.sandbox.docker.conduit import (
    INTERNAL_TIMEOUT_S,
    MEMORY,
    Conduit,
    internal_request,
    nothing,
)
from evalfleet.sandbox.docker.stream import ExecRequest, RawExec, first_line
from evalfleet.sandbox.errors import SandboxError
from evalfleet.sandbox.profile import Hardening, Profile
from evalfleet.sandbox.results import ExecResult
from evalfleet.sandbox.sealed import (
    DEADLINE,
    SEALED_USER,
    SealedOutcome,
    SealedRun,
    Unprepared,
    Withheld,
)
from evalfleet.sandbox.sealed import MEMORY as ENDED_BY_MEMORY

log = logging.getLogger(__name__)

#: As the candidate's uid, first: stop its processes, open up its own directories (a
#: ``chmod 000`` one hides what is below it from every walk but its owner's), then count
#: the workspace's entries (``$1``), no more than ``$2`` + 1 of them and no deeper than
#: ``$3`` + 1 levels (``find``'s ``-maxdepth``: a deeper tree costs nothing more), and
#: exit :data:`LEFT_OVER` naming the bound passed. What follows walks the same tree, as
#: the judge and as the candidate: the census is what makes their work bounded, whatever
#: the tree's depth, name lengths or entry count (issue 38).
CENSUS = scripts.STOP_FUNCTION + r"""
stop_candidate || exit 97
cd -- "$1" || exit 96
chmod -R u+rwX . 2>/dev/null
if find . -maxdepth 0 -printf '' 2>/dev/null; then
  find . -mindepth 1 -maxdepth "$(($3 + 1))" -printf '%d\n' 2>/dev/null
else
  find . -mindepth 1 -maxdepth "$(($3 + 1))" 2>/dev/null | awk -F/ '{ print NF - 1 }'
fi | head -n "$(($2 + 1))" | awk -v most="$2" -v deep="$3" '
  $1 > deep { print "the workspace is deeper than " deep " levels" > "/dev/stderr"; exit 3 }
  END { if (NR > most) { print "the workspace holds more than " most " entries" \
                               > "/dev/stderr"; exit 3 } }'
"""

#: As the uid running it (the judge's, then the candidate's): stop its processes, empty
#: what it left in ``/tmp`` and ``/dev/shm`` (a full ``/tmp`` would keep the sealed run's
#: files out; made writable first, as a ``chmod 000`` directory with files in it cannot be
#: emptied otherwise), and remove what it left under ``$1`` (the workspace) that is
#: neither a regular file nor a directory (``-delete`` where ``find`` has it: ``rm`` cannot
#: name a path deeper than ``PATH_MAX``). A link is the one way a candidate's file could
#: be the sealed command's own (a link to ``/proc/self/cwd/<its file>`` reads that file
#: back as the candidate's); a FIFO the command opens hangs it until its timeout; a socket
#: is no file either.
CLEAR = scripts.STOP_FUNCTION + r"""
stop_candidate || exit 97
command -v find >/dev/null || { echo "no find in the image" >&2; exit 1; }
find /tmp /dev/shm -mindepth 1 -maxdepth 1 -exec chmod -R u+rwX -- {} + 2>/dev/null
find /tmp /dev/shm -mindepth 1 -maxdepth 1 -exec rm -rf -- {} + 2>/dev/null
chmod -R u+rwX "$1" 2>/dev/null
find "$1" ! -type f ! -type d -delete 2>/dev/null ||
  find "$1" ! -type f ! -type d -exec rm -f -- {} + 2>/dev/null || :  # the other uid's stay
"""

#: As the candidate's uid, after :data:`CLEAR` as the judge: :data:`CLEAR`, make sure no
#: special file is left where the sealed command could see one, nothing in ``/tmp`` or
#: ``/dev/shm``, and no space of ``/tmp`` held (else exit :data:`LEFT_OVER`; a file
#: unlinked while open and sent over a unix socket into a cycle of sockets outlives every
#: process, on gVisor for good, and can keep ``/tmp`` full), make the workspace readable and
#: read-only to everyone (the sealed uid is "other"), then make ``$2`` with a ``home`` the
#: sealed uid can write and extract the run's files into it.
SEAL = CLEAR + r"""
left=$(find "$1" ! -type f ! -type d 2>/dev/null | head -n 1)
[ -z "$left" ] || { echo "a special file could not be removed: $left" >&2; exit 3; }
left=$(find /tmp /dev/shm -mindepth 1 -maxdepth 1 2>/dev/null | head -n 1)
[ -z "$left" ] || { echo "could not be removed: $left" >&2; exit 3; }
held=$(df -P /tmp 2>/dev/null | awk 'NR == 2 { print $3 }')
[ "${held:-0}" = 0 ] || { echo "$held KiB of /tmp held by files no name reaches" >&2; exit 3; }
chmod -R a+rX,a-w "$1" 2>/dev/null
mkdir -m 755 "$2" && mkdir -m 1777 "$2/home" && exec tar -xf - -C "$2"
"""

#: The exit status of the census when the tree passes a bound, and of the seal when
#: something the candidate left could not be removed (both uids' clears ran, so it is the
#: candidate's doing): the run is withheld.
LEFT_OVER = 3


def run(conduit: Conduit, sealed: SealedRun) -> SealedOutcome:
    """The sealed run in ``conduit`` (:meth:`sandbox.sealed.Sealing.run_sealed`).

    Raises:
        SandboxConfigError: ``sealed.files`` pass ``seed_bytes``.
        SandboxUnavailable: the engine or the container is gone.
    """
    if conduit.ended:  # nothing to detach or prepare in a sandbox that is gone
        return _ending(conduit) or Withheld()
    conduit.detach_networks()
    directory = f"/tmp/.{sealed.name}-{secrets.token_hex(8)}"
    found = _prepare(conduit, sealed, directory)
    if conduit.ended or isinstance(found, Withheld):
        return _ending(conduit) or _withheld(found)
    if found is not None:
        return found
    ran = conduit.run(_request(conduit.profile, sealed, directory), lambda: _stop(conduit))
    if ran is None:
        return _ending(conduit) or Withheld()
    return _result(ran)


def _request(profile: Profile, sealed: SealedRun, directory: str) -> ExecRequest:
    """The command under ``ulimit -v`` (``/tmp`` is ``noexec``: an interpreter runs a
    script there), as the sealed uid, in ``directory``."""
    kib = str(sealed.memory_bytes // 1024)
    argv = ("sh", "-c", 'ulimit -v "$1" && shift && exec "$@"', "sh", kib,
            *sealed.argv(directory))
    return ExecRequest(
        argv=argv, user=user(profile.hardening), workdir=directory,
        env={**profile.env, **sealed.env(directory)}, stdin=b"", timeout_s=sealed.timeout_s,
        cap=sealed.output_cap_bytes or profile.limits.output_cap_bytes)


def _result(ran: RawExec) -> ExecResult:
    """The command's result as the engine reported it."""
    return ExecResult(
        exit_code=ran.exit_code, stdout=ran.stdout, stderr=ran.stderr, timed_out=ran.timed_out,
        stdout_truncated=ran.stdout_truncated, stderr_truncated=ran.stderr_truncated,
        duration_s=ran.duration_s, error=ran.start_error or None)


def _stop(conduit: Conduit) -> None:
    """Called from the stream when the command passes its timeout or output cap: the
    supervisor stops every process; through ``exec`` a stop script as the sealed uid."""
    if conduit.channel is not None:
        try:
            conduit.channel.stop()
        except OSError as error:
            log.warning("could not stop the sealed run in %s: %s", conduit.id[:12], error)
        return
    request = ExecRequest(argv=("sh", "-c", scripts.STOP), user=user(conduit.profile.hardening),
                          workdir="/", env={}, stdin=b"", timeout_s=INTERNAL_TIMEOUT_S,
                          cap=4096)
    try:
        conduit.run(request, nothing)
    except SandboxError as error:
        log.warning("could not stop the sealed run in %s: %s", conduit.id[:12], error)


def _ending(conduit: Conduit) -> Withheld | None:
    """How a limit ended the sandbox (``None``: none did)."""
    if conduit.ended_by == MEMORY:
        return Withheld(ended_by=ENDED_BY_MEMORY)
    return Withheld(ended_by=DEADLINE) if conduit.deadline_exceeded else None


def _withheld(found: Withheld | Unprepared | None) -> Withheld:
    """``found`` as a :class:`Withheld` (the sandbox ended while it was prepared)."""
    if isinstance(found, Unprepared):
        return Withheld(found=found.why)
    return found or Withheld()


def _prepare(conduit: Conduit, sealed: SealedRun,
             directory: str) -> Withheld | Unprepared | None:
    """Count the tree as the candidate, clear as the judge, then seal as the candidate:
    ``None`` when the command can start (or the sandbox ended), else why not: withheld (the
    candidate is why: :data:`LEFT_OVER`, or a step that passed its time bound over the
    candidate's tree) or unprepared."""
    for request in _steps(conduit.profile, sealed, directory):
        done = conduit.run(request, stopping.stopper(conduit, request.user))
        if done is None:
            return None  # the sandbox ended: see _ending()
        if done.timed_out:
            return Withheld(step_timeout_s=request.timeout_s)
        if done.exit_code != 0:
            why = first_line(done.stderr) or f"exit code {done.exit_code}"
            # only the census and the seal exit LEFT_OVER
            return Withheld(found=why) if done.exit_code == LEFT_OVER else Unprepared(why)
    return None


def _steps(profile: Profile, sealed: SealedRun, directory: str) -> tuple[ExecRequest, ...]:
    """The census and the seal as the candidate, the clear between them as the judge."""
    limits, workdir = profile.limits, profile.workdir
    census = internal_request(profile, ("sh", "-c", CENSUS, "sh", workdir,
                                        str(limits.tree_entries), str(limits.tree_depth)),
                              stop_first=True)
    clear = internal_request(profile, ("sh", "-c", CLEAR, "sh", workdir), stop_first=True)
    seal = internal_request(profile, ("sh", "-c", SEAL, "sh", workdir, directory),
                            stdin=transfer.seed_archive(sealed.files, directory,
                                                        limits.seed_bytes),
                            stop_first=True)
    return census, dataclasses.replace(clear, user=profile.hardening.judge_user), seal


def user(hardening: Hardening) -> str:
    """:data:`~sandbox.sealed.SEALED_USER`, or the next free uid below it if a profile
    uses it."""
    taken = {hardening.user.split(":")[0], hardening.keeper_user.split(":")[0],
             hardening.judge_user.split(":")[0]}
    uid = int(SEALED_USER.split(":")[0])
    while str(uid) in taken:
        uid -= 1
    return f"{uid}:{uid}"
