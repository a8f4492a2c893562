"""Removing a container, asked again while the engine is still struggling with it.

Docker's forced removal kills the container first and gives up when no exit is confirmed
within about 12 s ("tried to kill container, but did not receive an exit event"); a gVisor
sandbox torn down under a fork bomb on a loaded host can take longer, or hold the engine
past the client's timeout. The container dies on its own soon after, but nothing would
remove it before the reaper reaches its deadline label, minutes later. So a removal the
engine failed (a server error, a conflict with a removal under way) is asked again after
growing pauses (:data:`PAUSES_S`, about half a minute in all). An engine that is not there
at all, or gave no answer within the client's timeout (it is still at it), is not waited
for: the worker's leftover pass, its last sweep at its stop, and the reaper ask later.

A sandbox is not killed by the engine at all if it can be helped: the worker hangs up on
its line (:mod:`sandbox.docker.lifeline`), its supervisor or keep-alive exits (its stdin
ends), and the removal waits up to :data:`EXIT_WAIT_S` for the container to stop by
itself. Killing a running gVisor sandbox
goes through containerd's shim, which holds the container's lock while ``runsc kill``
runs; when the sandbox dies meanwhile, its ptrace stub processes (one per process it ran,
hundreds after a fork bomb) are reparented to the shim, which then delivers each of their
exits with up to a second's wait while its own exit handler waits for that lock. Seen
from the worker, the removal hangs for minutes (bug 17 in docs/reliability.md).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import docker.errors
import requests.exceptions

if TYPE_CHECKING:
    from evalfleet.sandbox.docker.lifeline import Line

log = logging.getLogger(__name__)

#: Pauses before asking again, in order; the removal is abandoned after the last.
PAUSES_S = (0.5, 1.0, 2.0, 4.0, 8.0, 16.0)
#: How long a hung-up sandbox gets to stop by itself before the engine kills it. Long:
#: a gVisor sandbox after a fork bomb on a loaded host can take seconds to tear itself
#: down, and an engine kill that overlaps that death is bug 17's minutes-long hold; the
#: wait only runs out when the container cannot stop by itself.
EXIT_WAIT_S = 30.0


def remove(container: Any, *, line: Line | None = None,
           sleep: Callable[[float], None] = time.sleep) -> bool:
    """Remove ``container`` (force); whether it is gone. Never raises. With the worker's
    ``line`` to it, hung up on first (:func:`hang_up`)."""
    if line is not None:
        hang_up(line, container)
    for pause in (*PAUSES_S, None):
        try:
            container.remove(force=True)
            return True
        except docker.errors.NotFound:
            return True
        except Exception as error:  # removal must not raise; the reaper is the last resort
            if pause is None or not passing(error):
                log.warning("could not remove sandbox %s: %s", container.id[:12], error)
                return False
            log.info("removing sandbox %s failed (%s); asking again in %.1f s",
                     container.id[:12], error, pause)
            sleep(pause)
    return False  # unreachable: the last pause is None


def passing(error: BaseException) -> bool:
    """Whether the engine may well remove the container when asked again. Not after no
    answer in time: the engine is still at the removal, and asking again would hold the
    caller (the closer, with runs queued behind it) for another client timeout."""
    if isinstance(error, requests.exceptions.Timeout):
        return False
    if isinstance(error, docker.errors.APIError):
        return bool(error.is_server_error()) or error.status_code == 409
    return False


def hang_up(line: Line, container: Any) -> bool:
    """Hang up on ``container``'s supervisor or keep-alive (its stdin ends, it exits);
    whether the container stopped by itself within :data:`EXIT_WAIT_S`. Never raises."""
    line.close()
    return stopped(container, EXIT_WAIT_S)


def stopped(container: Any, within_s: float) -> bool:
    """Whether ``container`` stopped (or is gone) within ``within_s``. Never raises."""
    try:
        container.wait(timeout=within_s)
        return True
    except docker.errors.NotFound:
        return True
    except (docker.errors.DockerException, requests.exceptions.RequestException,
            OSError) as error:
        log.info("sandbox %s did not stop by itself within %.0f s (%s)",
                 container.id[:12], within_s, error)
        return False
