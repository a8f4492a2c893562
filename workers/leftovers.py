"""A worker node's own sandboxes that no run can need any more: removed by its main process
while it runs (:func:`reap`, periodically) and once more when it stops (:func:`remove_all`).
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from evalfleet.sandbox.docker.labels import (
    LABEL_FLEET,
    LABEL_PROCESS,
    LABEL_RUN,
    LABEL_WORKER,
    WARM_RUN_ID,
)
from evalfleet.sandbox.docker.listing import labelled, labels_of

from .settings import Settings

log = logging.getLogger(__name__)


def reap(client: Any, redis: Any, settings: Settings) -> list[str]:
    """Remove this worker's sandboxes that no run can still need; their ids.

    The fleet reaper spares every sandbox of a live worker until its deadline, which leaves
    two kinds running for up to the profile's wall time: the sandbox of a pool process
    killed mid-run (SIGKILL, OOM killer; the run itself is requeued by
    ``task_reject_on_worker_lost``), and one whose removal failed because the engine was
    unreachable at the time. The main process knows its children, and a run whose result
    is published needs no sandbox any more, so both are removed here.
    """

    labels = [f"{LABEL_WORKER}={settings.worker_id}", f"{LABEL_FLEET}={settings.fleet_label}",
              LABEL_PROCESS]
    removed: list[str] = []
    for container in labelled(client, labels):
        found = labels_of(container)
        run_id = found.get(LABEL_RUN, "")
        if _own_live_process(found.get(LABEL_PROCESS, "")) and not (
                run_id and run_id != WARM_RUN_ID and _published(redis, run_id)):
            continue
        with contextlib.suppress(Exception):  # gone already, or the next pass retries
            container.remove(force=True)
            removed.append(container.id)
    return removed


def _published(redis: Any, label: str) -> bool:
    """Whether the run a sandbox's run label names (a tenant's: ``<tenant>/<run_id>``) has
    its result."""
    from evalfleet.tasks.redis_keys import run_of

    keys, run_id = run_of(label)
    return bool(redis.exists(keys.result(run_id)))


def remove_all(settings: Settings, engine: Callable[[], Any]) -> list[str]:
    """A stopping worker's last sweep, once its pool processes are gone: remove every
    sandbox it still has (their ids), each asked again while the engine is struggling
    (:mod:`sandbox.docker.removal`). No run can need one now; without this, a sandbox
    whose removal the engine failed during the shutdown (Docker gives up a forced kill of a
    gVisor sandbox under a fork bomb after about 12 s) stayed until another worker's reaper
    found this one dead or the sandbox's deadline passed."""
    from evalfleet.sandbox.docker.removal import remove

    labels = [f"{LABEL_WORKER}={settings.worker_id}", f"{LABEL_FLEET}={settings.fleet_label}"]
    try:
        left = labelled(engine(), labels)
    except Exception as error:  # no engine: the other workers' reapers will see to them
        log.warning("could not list this worker's sandboxes at its stop: %s", error)
        return []
    return [container.id for container in left if remove(container)]


def _own_live_process(pid: str) -> bool:
    """Whether ``pid`` is this process or a live (non-zombie) child of it."""
    if not pid.isdigit():
        return True  # not ours to judge
    if int(pid) == os.getpid():
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    except OSError:
        return True  # no /proc: unsure means alive
    state, ppid = stat.rsplit(")", 1)[1].split()[:2]
    return state != "Z" and int(ppid) == os.getpid()
