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
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

import docker.errors
import requests.exceptions

log = logging.getLogger(__name__)

#: Pauses before asking again, in order; the removal is abandoned after the last.
PAUSES_S = (0.5, 1.0, 2.0, 4.0, 8.0, 16.0)


def remove(container: Any, *, sleep: Callable[[float], None] = time.sleep) -> bool:
    """Remove ``container`` (force); whether it is gone. Never raises."""
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
