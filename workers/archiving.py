"""The archiver's process: ``evalfleet archiver``, which each worker node starts beside
itself (niced), or an operator runs on its own.

It runs apart from the worker's main process on purpose. Archiving is Python work (boto3
signs and sends two or three requests a run): in the main process it held the GIL that
Celery's consumer needs and cut a node's drain rate by a third or more (bench ``archive``).
In a process of its own, at a lower priority, it yields the CPU to runs and catches up
when they leave some: results wait in Redis meanwhile, which is what the backlog is for.
"""

from __future__ import annotations

import logging
import os
import time
from typing import Any

from .settings import Settings
from .side_process import Stopping

log = logging.getLogger(__name__)

#: How much lower than the worker the archiver runs (``nice``).
NICENESS = 10


def open_archive(settings: Settings) -> Any:
    """The archive the settings name (None when it is off).

    Raises:
        SystemExit: the URL is invalid, or its store's client is missing.
    """
    from evalfleet.tasks.archive import Archive, StoreError

    try:
        return Archive.at(settings.archive.url, settings.archive.tenants)
    except (ValueError, StoreError) as error:
        raise SystemExit(f"evalfleet: EVALFLEET_ARCHIVE__URL or __TENANTS: {error}") from error


def result_link(settings: Settings) -> Any:
    """The webhooks' link to an archived result (``tasks.webhooks.payload.ResultLink``):
    the archive's presigned URL, valid a day past the deliveries' give-up time; a run not
    archived yet makes the delivery wait (``LinkPending``). None when the archive is off.

    Raises:
        SystemExit: see :func:`open_archive`.
    """
    from evalfleet.tasks.archive import NotArchived, StoreError
    from evalfleet.tasks.webhooks.payload import LinkPending

    archive = open_archive(settings)
    if archive is None:
        return None
    expires_s = int(settings.webhooks.give_up_after_s) + 24 * 3600

    def link(run_id: str, body: bytes, tenant: str | None = None) -> str | None:
        try:
            return archive.of_tenant(tenant).link(  # type: ignore[no-any-return]
                run_id, expires_s)
        except (NotArchived, StoreError):  # not written yet, or the store is down: later
            raise LinkPending(run_id) from None

    return link


def serve(settings: Settings, parent: int | None = None) -> None:
    """Archive until SIGTERM (or until ``parent``, the worker that started it, is gone).

    Raises:
        SystemExit: the archive URL is invalid, or its store's client is missing.
    """

    from evalfleet.tasks.archive.archiver import Archiver
    from evalfleet.tasks.archive.backlog import Limits
    from evalfleet.tasks.redis_connection import connect

    from .delivery_metrics import ArchiveCounters

    archive = open_archive(settings)
    if archive is None:
        log.info("archive: off (EVALFLEET_ARCHIVE__URL=none)")
        return
    wanted = settings.archive
    client = connect(settings.redis_url, health_check_interval=30, socket_keepalive=True)
    archiver = Archiver(client, archive, consumer=settings.worker_id,
                        ttl_s=settings.result_ttl_s,
                        claim_after_ms=int(wanted.claim_after_s * 1000),
                        limits=Limits(wanted.refuse_at, wanted.max_backlog))
    _ready(archiver)
    log.info("archive: every published result goes to %s", archive.describe())
    stopping = Stopping().install()
    counters = ArchiveCounters()
    while not stopping.asked and (parent is None or os.getppid() == parent):
        try:
            archiver.step()
        except Exception as err:  # Redis away or full: the next step retries
            log.warning("archive: %s", err)
            time.sleep(1.0)
        counters.update(archiver.tally)


def _ready(archiver: Any) -> None:
    """Make the store ready and the group exist (each retried later when it fails)."""
    try:
        archiver.archive.store.prepare()
    except Exception as err:  # the store is down: results wait in Redis until it is back
        log.warning("archive: %s", err)
    try:
        archiver.ensure_group()
    except Exception as err:  # a full or absent Redis: the first step retries
        log.warning("archive group not created yet: %s", err)
