"""The Docker driver's half of the evaluator step: seal the workspace, write the
evaluator's files and run it as its own uid with no network (see :mod:`sandbox.evaluator`).
"""

from __future__ import annotations

import dataclasses
import logging
import secrets
from collections.abc import Mapping

from evalfleet.sandbox.command import SeedFile
from evalfleet.sandbox.docker import scripts, stopping, transfer
from evalfleet.sandbox.docker.conduit import (
    INTERNAL_TIMEOUT_S,
    MEMORY,
    Conduit,
    internal_request,
    nothing,
)
from evalfleet.sandbox.docker.stream import ExecRequest, first_line
from evalfleet.sandbox.errors import SandboxError
from evalfleet.sandbox.evaluator import (
    EVALUATOR_USER,
    GROUND_TRUTH,
    EvaluatorRecord,
    EvaluatorRun,
    not_run,
    withheld,
)
from evalfleet.sandbox.evaluator import record as record_evaluator
from evalfleet.sandbox.profile import Hardening, Profile
from evalfleet.sandbox.results import ExecResult

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
#: what it left in ``/tmp`` and ``/dev/shm`` (a full ``/tmp`` would keep the evaluator's
#: files out; made writable first, as a ``chmod 000`` directory with files in it cannot be
#: emptied otherwise), and remove what it left under ``$1`` (the workspace) that is
#: neither a regular file nor a directory (``-delete`` where ``find`` has it: ``rm`` cannot
#: name a path deeper than ``PATH_MAX``). A link is the one way a submission's file could
#: be the evaluator's own (``answer.json`` -> ``/proc/self/cwd/ground-truth.json`` reads the
#: ground truth back as the answer); a FIFO at an answer's path hangs the evaluator's
#: ``open`` until its timeout; a socket is no answer either.
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
#: special file is left where the evaluator could see one, nothing in ``/tmp`` or
#: ``/dev/shm``, and no space of ``/tmp`` held (else exit :data:`LEFT_OVER`; a file
#: unlinked while open and sent over a unix socket into a cycle of sockets outlives every
#: process, on gVisor for good, and can keep ``/tmp`` full), make the workspace readable and
#: read-only to everyone (the evaluator is "other"), then make ``$2`` with a ``home`` the
#: evaluator can write and extract the evaluator's files into it.
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
#: something the submission left could not be removed (both uids' clears ran, so it is the
#: submission's doing): the evaluator is withheld.
LEFT_OVER = 3


def run(conduit: Conduit, spec: EvaluatorRun,
        trusted: Mapping[str, str] | None = None) -> EvaluatorRecord:
    """The evaluator's record (``not_run`` when it could not be prepared or started);
    ``trusted``: what the fleet sets over every other environment (a ``PATH`` the
    candidate cannot write in: :func:`sandbox.evaluation.judge.trusted_env`).

    Raises:
        SandboxUnavailable: the engine or the container is gone.
    """
    profile = conduit.profile
    directory = f"/tmp/.evaluator-{secrets.token_hex(8)}"
    if conduit.ended:  # nothing to detach or prepare in a sandbox that is gone
        return withheld(spec, _ending(conduit))
    conduit.detach_networks()
    why, submissions = _prepare(conduit, spec, directory)
    if conduit.ended or submissions:
        return withheld(spec, _ending(conduit) or why)
    if why:
        return not_run(spec, f"could not prepare the evaluator: {why}")
    request = ExecRequest(
        argv=spec.argv(directory), user=user(profile.hardening), workdir=directory,
        env={**profile.env, **spec.environment(profile.workdir, directory), **(trusted or {})},
        stdin=b"",
        timeout_s=spec.timeout_s, cap=spec.output_cap_bytes or profile.limits.output_cap_bytes)
    ran = conduit.run(request, lambda: _stop(conduit))
    if ran is None:
        return withheld(spec, _ending(conduit))
    return record_evaluator(spec, ExecResult(
        exit_code=ran.exit_code, stdout=ran.stdout, stderr=ran.stderr, timed_out=ran.timed_out,
        stdout_truncated=ran.stdout_truncated, stderr_truncated=ran.stderr_truncated,
        duration_s=ran.duration_s, error=ran.start_error or None))


def _stop(conduit: Conduit) -> None:
    """Called from the stream when the evaluator passes its timeout or output cap: the
    supervisor stops every process; through ``exec`` a stop script as the evaluator's uid."""
    if conduit.channel is not None:
        try:
            conduit.channel.stop()
        except OSError as error:
            log.warning("could not stop the evaluator in %s: %s", conduit.id[:12], error)
        return
    request = ExecRequest(argv=("sh", "-c", scripts.STOP), user=user(conduit.profile.hardening),
                          workdir="/", env={}, stdin=b"", timeout_s=INTERNAL_TIMEOUT_S,
                          cap=4096)
    try:
        conduit.run(request, nothing)
    except SandboxError as error:
        log.warning("could not stop the evaluator in %s: %s", conduit.id[:12], error)


def _ending(conduit: Conduit) -> str:
    """How a limit ended the sandbox (``""``: it did not)."""
    if conduit.ended_by == MEMORY:
        return "the sandbox was killed at its memory limit"
    return "the sandbox's wall deadline passed" if conduit.deadline_exceeded else ""


def _prepare(conduit: Conduit, spec: EvaluatorRun, directory: str) -> tuple[str, bool]:
    """Count the tree as the candidate, clear as the judge, then seal as the candidate:
    ``""`` when the evaluator can start, else why not, and whether the submission is why
    (:data:`LEFT_OVER`, or a step that passed its time bound over the candidate's tree)."""
    for request in _steps(conduit.profile, spec, directory):
        done = conduit.run(request, stopping.stopper(conduit, request.user))
        if done is None:
            return "", False  # the sandbox ended: see _ending()
        if done.timed_out:
            return (f"preparing the workspace took longer than {request.timeout_s:g} s "
                    f"(the tree the submission left)"), True
        if done.exit_code != 0:
            why = first_line(done.stderr) or f"exit code {done.exit_code}"
            return why, done.exit_code == LEFT_OVER  # only the census and the seal do
    return "", False


def _steps(profile: Profile, spec: EvaluatorRun, directory: str) -> tuple[ExecRequest, ...]:
    """The census and the seal as the candidate, the clear between them as the judge."""
    limits, workdir = profile.limits, profile.workdir
    census = internal_request(profile, ("sh", "-c", CENSUS, "sh", workdir,
                                        str(limits.tree_entries), str(limits.tree_depth)),
                              stop_first=True)
    clear = internal_request(profile, ("sh", "-c", CLEAR, "sh", workdir), stop_first=True)
    seal = internal_request(profile, ("sh", "-c", SEAL, "sh", workdir, directory),
                            stdin=archive(spec, directory, limits.seed_bytes),
                            stop_first=True)
    return census, dataclasses.replace(clear, user=profile.hardening.judge_user), seal


def archive(spec: EvaluatorRun, directory: str, max_bytes: int) -> bytes:
    """A tar of the script and ``ground-truth.json``, relative to ``directory``."""
    files = [SeedFile(path=spec.script_name, content=spec.script, mode=0o644),
             SeedFile(path=GROUND_TRUTH, content=spec.ground_truth, mode=0o644)]
    return transfer.seed_archive(files, directory, max_bytes)


def user(hardening: Hardening) -> str:
    """:data:`EVALUATOR_USER`, or the next free uid below it if a profile uses it."""
    taken = {hardening.user.split(":")[0], hardening.keeper_user.split(":")[0],
             hardening.judge_user.split(":")[0]}
    uid = 65533
    while str(uid) in taken:
        uid -= 1
    return EVALUATOR_USER if uid == 65533 else f"{uid}:{uid}"
