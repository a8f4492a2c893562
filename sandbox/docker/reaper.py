"""The reaper: removes evalfleet containers whose worker is gone or whose deadline passed.

Run at worker start and then periodically. The caller says which workers are alive (for
example, whether a heartbeat key exists); a container of a live worker is never touched
before its deadline. When the liveness check itself fails, the container is spared: a
leak is cheaper than killing a live run.

Liveness is only meaningful within one fleet (one Redis). When several fleets share a
Docker engine (CI, demos, tests with private Redis servers), give each a label through
``DockerFactory(extra_labels={"evalfleet.fleet": NAME})`` and reap with
``Reaper(extra_filters={"evalfleet.fleet": NAME})``; otherwise a fleet sees the other's
workers as dead and removes their running sandboxes.

One exception is safe across fleets: with ``abandoned_after_s`` set, a pass also removes
every evalfleet sandbox on the engine that is that long past its deadline, whatever its
fleet (its other ``extra_filters`` still apply). Its own worker's timer killed it long
ago, so nothing can still need it; without this, the sandboxes of a fleet that no longer
exists under its name (its Redis flushed, so its id changed) would stay on the engine
forever.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import docker.errors

from evalfleet.sandbox.docker.failure import classify
from evalfleet.sandbox.docker.labels import LABEL_DEADLINE, LABEL_FLEET, LABEL_WORKER
from evalfleet.sandbox.docker.listing import labelled, labels_of

log = logging.getLogger(__name__)

#: Removals a pass runs at once: a gVisor sandbox torn down under load can take a minute
#: to go, and one pass may find every sandbox of a lost worker node.
REMOVALS_AT_ONCE = 4


@dataclass(frozen=True)
class Reaped:
    """One pass: containers removed (by reason) and spared."""

    orphaned: tuple[str, ...] = ()
    expired: tuple[str, ...] = ()
    spared: int = 0
    abandoned: tuple[str, ...] = ()
    """Any fleet's sandboxes long past their deadline (see ``abandoned_after_s``)."""


@dataclass
class Reaper:
    """Removes orphaned and expired evalfleet containers."""

    client: Any
    is_alive: Callable[[str], bool]
    """Whether a worker id is alive (e.g. its heartbeat key exists)."""
    clock: Callable[[], float] = time.time
    extra_filters: dict[str, str] = field(default_factory=dict)
    """Further label filters (``{"evalfleet.test": "1"}`` confines it to tests)."""
    abandoned_after_s: float | None = None
    """Also remove any fleet's sandboxes this long past their deadline (``None``: never)."""

    def reap_once(self) -> Reaped:
        """One pass over every container labelled with a worker.

        Raises:
            SandboxUnavailable: the engine is not there.
        """
        orphaned: list[str] = []
        expired: list[str] = []
        doomed: list[Any] = []
        spared = 0
        alive: dict[str, bool] = {}
        for container in self._containers():
            labels = labels_of(container)
            worker = labels.get(LABEL_WORKER, "")
            if self._past_deadline(labels):
                expired.append(container.id)
            elif not alive.setdefault(worker, self._alive(worker)):
                orphaned.append(container.id)
            else:
                spared += 1
                continue
            doomed.append(container)
        _remove_all(doomed)
        return Reaped(orphaned=tuple(orphaned), expired=tuple(expired), spared=spared,
                      abandoned=self._reap_abandoned())

    def _reap_abandoned(self) -> tuple[str, ...]:
        """Remove every evalfleet sandbox ``abandoned_after_s`` past its deadline."""
        if self.abandoned_after_s is None:
            return ()
        grace = self.abandoned_after_s
        gone = [c for c in self._containers(scoped=False)
                if self._past_deadline(labels_of(c), grace)]
        _remove_all(gone)
        return tuple(c.id for c in gone)

    def run(self, interval_s: float, stop: threading.Event) -> threading.Thread:
        """Reap now and then every ``interval_s`` until ``stop`` is set (a daemon thread)."""

        def loop() -> None:
            while True:
                try:
                    report = self.reap_once()
                    if report.orphaned or report.expired or report.abandoned:
                        log.info("reaped %d orphaned, %d expired, %d abandoned sandboxes",
                                 len(report.orphaned), len(report.expired),
                                 len(report.abandoned))
                except Exception as error:  # keep reaping whatever one pass hit
                    log.warning("reaper pass failed: %s", error)
                if stop.wait(interval_s):
                    return

        thread = threading.Thread(target=loop, name="sandbox-reaper", daemon=True)
        thread.start()
        return thread

    def _containers(self, *, scoped: bool = True) -> list[Any]:
        """Containers with a worker label and :attr:`extra_filters`; unscoped, whatever
        their fleet (the other filters still hold: a reaper confined to tests stays so)."""
        labels = [LABEL_WORKER] + [f"{k}={v}" for k, v in self.extra_filters.items()
                                   if scoped or k != LABEL_FLEET]
        try:
            return labelled(self.client, labels)
        except (docker.errors.DockerException, OSError) as error:
            raise classify(error, what="list containers") from error

    def _past_deadline(self, labels: dict[str, str], grace: float = 0.0) -> bool:
        try:
            return self.clock() > float(labels.get(LABEL_DEADLINE, "inf")) + grace
        except ValueError:
            return False

    def _alive(self, worker: str) -> bool:
        try:
            return bool(self.is_alive(worker))
        except Exception as error:  # unsure means alive: never kill a live worker's run
            log.warning("liveness check for %r failed: %s", worker, error)
            return True


def _remove_all(containers: Sequence[Any]) -> None:
    """Remove ``containers``, :data:`REMOVALS_AT_ONCE` at a time."""
    if not containers:
        return
    with ThreadPoolExecutor(min(REMOVALS_AT_ONCE, len(containers)),
                            thread_name_prefix="reaper-remove") as removals:
        list(removals.map(_remove, containers))


def _remove(container: Any) -> None:
    try:
        container.remove(force=True)
    except docker.errors.NotFound:
        pass  # already gone: fine
    except (docker.errors.DockerException, OSError) as error:  # next pass retries
        log.warning("could not remove %s: %s", container.id[:12], error)
