"""Stopping the candidate's processes, and what stops a command at its limit.

With a supervisor, pid 1 stops every process (``kill(-1)``, which no process in the sandbox
can signal, trace or race). Through ``docker exec``, a ``STOP`` script runs as the uid to
stop, backed by a kill from the host's PID namespace (:func:`host_kill`) when the candidate
races it; runc may be unable to start the script while the pids are exhausted, so it is
retried.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable

from evalfleet.sandbox.docker import scripts
from evalfleet.sandbox.docker.conduit import PAST_DEADLINE, Conduit, internal_request, nothing
from evalfleet.sandbox.docker.frames import ChannelClosed
from evalfleet.sandbox.docker.hostkill import host_kill
from evalfleet.sandbox.errors import SandboxError, SandboxUnavailable

log = logging.getLogger(__name__)

#: Attempts at stopping the candidate when runc cannot start the stop script (no pids left).
STOP_ATTEMPTS = 20


def stop_candidate(conduit: Conduit) -> None:
    """Kill every process of the candidate's uid (retrying while pids are exhausted).

    Raises:
        SandboxUnavailable: the processes could not be stopped, or the container is gone.
    """
    for attempt in range(STOP_ATTEMPTS):
        if _stop_once(conduit) or conduit.ended:
            return
        # A candidate can race the exec'd stopper (same uid, e.g. a `kill -9 -1`
        # loop): from the host's PID namespace its processes cannot race back.
        host_kill(conduit.container, conduit.profile.hardening.user)
        time.sleep(0.05 * attempt)
    raise SandboxUnavailable("could not stop the candidate's processes", sandbox_id=conduit.id)


def kill_candidate(conduit: Conduit) -> None:
    """Called from the stream when a command passes its timeout or its output cap."""
    try:
        stop_candidate(conduit)
    except SandboxError as error:
        log.warning("could not stop the candidate in %s: %s", conduit.id[:12], error)


def stopper(conduit: Conduit, user: str) -> Callable[[], None]:
    """What stops a command of ``user`` at its limit: the supervisor stops everyone;
    through ``exec`` a stop script runs as that uid (besides the candidate's)."""
    if conduit.channel is not None or user == conduit.profile.hardening.user:
        return lambda: kill_candidate(conduit)

    def stop_both() -> None:
        _stop_as(conduit, user)
        kill_candidate(conduit)

    return stop_both


def _stop_once(conduit: Conduit) -> bool:
    """One stop: by the supervisor when there is one, else by the ``STOP`` script."""
    if conduit.channel is None:
        request = internal_request(conduit.profile, ("sh", "-c", scripts.STOP))
        return (conduit.run(request, nothing) or PAST_DEADLINE).exit_code == 0
    try:
        left = conduit.channel.stop()
    except ChannelClosed as error:
        if conduit.ended or conduit.died_of_memory():
            return True
        raise SandboxUnavailable(f"stop: {error}", sandbox_id=conduit.id) from error
    if left:
        log.warning("stopping the candidate in %s: %s", conduit.id[:12], left)
    return not left


def _stop_as(conduit: Conduit, user: str) -> None:
    request = dataclasses.replace(
        internal_request(conduit.profile, ("sh", "-c", scripts.STOP)), user=user)
    try:
        conduit.run(request, nothing)
    except SandboxError as error:
        log.warning("could not stop uid %s in %s: %s", user, conduit.id[:12], error)
