"""The Docker driver's half of the evaluator step: seal the workspace, write the
evaluator's files and run it as its own uid with no network (see :mod:`sandbox.evaluator`).
"""

from __future__ import annotations

import logging
import secrets

from sandbox.command import SeedFile
from sandbox.docker import scripts, transfer
from sandbox.docker.conduit import INTERNAL_TIMEOUT_S, Conduit, internal_request, nothing
from sandbox.docker.stream import ExecRequest, first_line
from sandbox.errors import SandboxError
from sandbox.evaluator import EVALUATOR_USER, GROUND_TRUTH, EvaluatorRecord, EvaluatorRun, not_run
from sandbox.evaluator import record as record_evaluator
from sandbox.profile import Hardening, Profile
from sandbox.results import ExecResult

log = logging.getLogger(__name__)

#: Removes every link under ``$1`` (the workspace) as the uid running it: a link is the one
#: way a submission's file could be the evaluator's own (``answer.json`` ->
#: ``/proc/self/cwd/ground-truth.json`` reads the ground truth back as the answer).
UNLINK = r"""
find "$1" -type l -exec rm -f -- {} + 2>/dev/null
"""

#: As the candidate's uid: stop the candidate, remove its links, make the workspace
#: readable and read-only to everyone (the evaluator is "other"), then make ``$2`` with a
#: ``home`` the evaluator can write and extract the evaluator's files into it.
SEAL = scripts.STOP_FUNCTION + r"""
stop_candidate || exit 97
chmod -R u+rwX "$1" 2>/dev/null
""" + UNLINK + r"""
chmod -R a+rX,a-w "$1" 2>/dev/null
mkdir -m 755 "$2" && mkdir -m 1777 "$2/home" && exec tar -xf - -C "$2"
"""

#: As the judge's uid, after the seal: stop the judge's processes (a workspace test can
#: run the candidate's code as the judge), remove the links they made, then make sure
#: that no link is left anywhere under ``$1``.
SWEEP = scripts.STOP_FUNCTION + r"""
stop_candidate || exit 97
""" + UNLINK + r"""
command -v find >/dev/null || { echo "no find in the image" >&2; exit 1; }
left=$(find "$1" -type l 2>/dev/null | head -n 1)
[ -z "$left" ] || { echo "a link could not be removed: $left" >&2; exit 1; }
"""


def run(conduit: Conduit, spec: EvaluatorRun) -> EvaluatorRecord:
    """The evaluator's record (``not_run`` when it could not be prepared or started).

    Raises:
        SandboxUnavailable: the engine or the container is gone.
    """
    profile = conduit.profile
    directory = f"/tmp/.evaluator-{secrets.token_hex(8)}"
    conduit.detach_networks()
    why = _prepare(conduit, spec, directory)
    if why:
        return not_run(spec, f"could not prepare the evaluator: {why}")
    request = ExecRequest(
        argv=spec.argv(directory), user=user(profile.hardening), workdir=directory,
        env={**profile.env, **spec.environment(profile.workdir, directory)}, stdin=b"",
        timeout_s=spec.timeout_s, cap=spec.output_cap_bytes or profile.limits.output_cap_bytes)
    ran = conduit.run(request, lambda: _stop(conduit))
    if ran is None:
        return not_run(spec, "sandbox deadline exceeded")
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


def _prepare(conduit: Conduit, spec: EvaluatorRun, directory: str) -> str:
    """Seal the workspace as the candidate, then sweep it as the judge; ``""`` when the
    evaluator can start, else why not."""
    profile = conduit.profile
    seal = internal_request(profile, ("sh", "-c", SEAL, "sh", profile.workdir, directory),
                            stdin=archive(spec, directory, profile.limits.seed_bytes),
                            stop_first=True)
    for request in (seal, sweep(profile)):
        done = conduit.run(request, nothing)
        if done is None:
            return "sandbox deadline exceeded"
        if done.exit_code != 0:
            return first_line(done.stderr) or f"exit code {done.exit_code}"
    return ""


def sweep(profile: Profile) -> ExecRequest:
    """:data:`SWEEP` as the judge, over the workspace."""
    return ExecRequest(argv=("sh", "-c", SWEEP, "sh", profile.workdir),
                       user=profile.hardening.judge_user, workdir="/", env={}, stdin=b"",
                       timeout_s=INTERNAL_TIMEOUT_S, cap=4096, stop_first=True)


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
