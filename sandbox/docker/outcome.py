"""A command's request, and how its raw answer becomes the command's result.

The driver sends every command of the candidate or the judge as an
:class:`~sandbox.docker.stream.ExecRequest` built here (its user, directory, environment,
timeout and caps) and reads the :class:`~sandbox.docker.stream.RawExec` it gets back into
an :class:`~sandbox.results.ExecResult`: an OOM kill told apart from other SIGKILLs, a start
failure that is the candidate's (a missing program or directory) told apart from the
sandbox's, and what a command reports once a limit has ended the sandbox.
"""

from __future__ import annotations

from collections.abc import Sequence

from evalfleet.sandbox.command import Command
from evalfleet.sandbox.docker.conduit import MEMORY, Conduit
from evalfleet.sandbox.docker.failure import start_error_is_candidates
from evalfleet.sandbox.docker.stream import ExecRequest, RawExec
from evalfleet.sandbox.errors import SandboxUnavailable
from evalfleet.sandbox.results import ExecResult

#: Exit status of a process killed by SIGKILL (OOM killer, timeout, cap).
SIGKILL_STATUS = 137
#: Exit status of a driver script that gave up before the candidate's command started.
DRIVER_FAILED = 97


def driver_failed(raw: RawExec, nonce: str) -> bool:
    """Whether a driver script gave up before the command (exit 97 and its ``@nonce`` line
    on stderr; the nonce is chosen after the candidate stopped, so nothing can forge it)."""
    return raw.exit_code == DRIVER_FAILED and f"\n@{nonce} ".encode() in b"\n" + raw.stderr


def request(conduit: Conduit, command: Command, argv: Sequence[str], *, stdin: bytes,
            stop_first: bool = False) -> ExecRequest:
    """The request of ``command`` (as its user, the candidate's by default) running
    ``argv``, with its environment, directory, timeout and caps."""
    profile = conduit.profile
    limits = profile.limits
    return ExecRequest(
        argv=argv, user=command.user or profile.hardening.user,
        workdir=command.workdir or profile.workdir,
        env={**profile.env, **command.env}, stdin=stdin,
        timeout_s=command.timeout_s or limits.exec_timeout_s,
        cap=command.output_cap_bytes or limits.output_cap_bytes, stop_first=stop_first)


def result(conduit: Conduit, raw: RawExec) -> ExecResult:
    """A command's result from its raw answer.

    Raises:
        SandboxUnavailable: the command could not start, and not for the candidate's sake.
    """
    if raw.start_error:
        return start_failure(conduit, raw)
    oom = raw.exit_code == SIGKILL_STATUS and not raw.timed_out and conduit.oom_happened(raw)
    return ExecResult(exit_code=raw.exit_code, stdout=raw.stdout, stderr=raw.stderr,
                      timed_out=raw.timed_out or conduit.deadline_exceeded,
                      stdout_truncated=raw.stdout_truncated,
                      stderr_truncated=raw.stderr_truncated, duration_s=raw.duration_s,
                      oom_killed=oom)


def ended(conduit: Conduit) -> ExecResult:
    """What a command reports once a limit ended the sandbox: the candidate's doing, a
    result and never an error (an error makes a test's validator ``infra_error``, and a
    submission that ran out the clock or its memory would turn its loss into no contest).
    Past the wall deadline the command timed out; once a gVisor sandbox was killed at its
    memory limit, it was SIGKILLed with it, as the command in flight was."""
    if conduit.ended_by == MEMORY:
        return ExecResult(exit_code=SIGKILL_STATUS, oom_killed=True)
    return ExecResult(exit_code=None, timed_out=True)


def start_failure(conduit: Conduit, raw: RawExec) -> ExecResult:
    """A start failure worded as runc words the candidate's own (a result), else ours.

    Raises:
        SandboxUnavailable: the failure is not the candidate's.
    """
    message = raw.start_error or ""
    if not start_error_is_candidates(message):
        raise SandboxUnavailable(f"exec could not start: {message}", sandbox_id=conduit.id)
    return ExecResult(exit_code=None, error=message, duration_s=raw.duration_s)
