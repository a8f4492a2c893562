"""The admitter's process: ``evalfleet admitter``, which each worker node starts beside
itself (:mod:`workers.side_process`); the one holding the fleet's lease admits runs from
the waiting rooms into the queues (:mod:`tasks.admission`), the others wait for the lease.

It runs apart from the worker's main process on purpose: admission is Python work (a few
Redis round trips a step, a Celery message per run), and in the main process it held the
GIL the Celery consumer needs (bench ``fairness``: a drain at 0.7 of admission off).
"""

from __future__ import annotations

import logging
import os
import time
from typing import Any

from .settings import Settings
from .side_process import Stopping

log = logging.getLogger(__name__)


def serve(settings: Settings, parent: int | None = None) -> None:
    """Admit while holding the lease, until SIGTERM (or until ``parent`` is gone); the
    lease is given up on the way out, so another node's admitter takes over at once."""
    from evalfleet.tasks.admission.admitter import Admitter
    from evalfleet.tasks.platform.intake import sender_app
    from evalfleet.tasks.redis_connection import connect

    wanted = settings.admission
    admitter = Admitter(connect(settings.redis_url, health_check_interval=30,
                                socket_keepalive=True),
                        sender_app(settings.redis_url, settings.visibility_timeout_s),
                        settings.worker_id, wanted.fleet_share, wanted.queued_per_slot,
                        int(wanted.lease_s * 1000))
    stopping = Stopping().install()
    while not stopping.asked and (parent is None or os.getppid() == parent):
        try:
            pause(admitter, admitter.step())
        except Exception as err:  # Redis away or full: the next step retries
            log.warning("admission: %s", err)
            time.sleep(1.0)
    try:
        admitter.release()
    except Exception as err:  # Redis away: the lease expires on its own
        log.warning("admission: lease not released: %s", err)


def pause(admitter: Any, sent: int) -> None:
    """Between steps: 5 ms while runs wait (a queue a few runs deep per slot lasts that
    long even for runs of milliseconds), 20 ms when none waits, 0.5 s when another node
    holds the lease. Steps are the admitter's cost: each is a few round trips."""
    if not admitter.leading:
        time.sleep(0.5)
    elif admitter.waiting:
        time.sleep(0.005)
    elif not sent:
        time.sleep(0.02)
