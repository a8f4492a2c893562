"""A warm pool: started, never-used containers per profile, refilled in the background.

Taking a warm sandbox costs no container creation on the run's path: the container was
created and started earlier by the refill thread. Each container serves exactly one run
and is then removed by :meth:`DockerSandbox.close`; nothing ever goes back into the pool.
A request whose profile differs from the pooled one (clamped limits, another network) is
a miss and gets a cold sandbox. Labels cannot change after creation, so a warm
container's ``evalfleet.run_id`` stays ``warm``; the run id lives on the sandbox object.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import docker.errors

from sandbox.docker.channel import Channel
from sandbox.docker.driver import DockerSandbox
from sandbox.docker.factory import DEADLINE_SLACK_S, DockerFactory
from sandbox.docker.failure import classify
from sandbox.docker.limits import LABEL_POOL, LABEL_WORKER, WARM_RUN_ID, Ownership
from sandbox.errors import SandboxError
from sandbox.profile import Profile

log = logging.getLogger(__name__)

#: Seconds a warm container may wait before it is replaced by a fresh one.
DEFAULT_MAX_IDLE_S = 600.0
#: Seconds between refill passes when nothing wakes the thread.
REFILL_INTERVAL_S = 1.0


@dataclass(frozen=True)
class PoolStats:
    """What the pool did for one profile (for metrics)."""

    profile: str
    target: int
    idle: int
    hits: int
    misses: int
    created: int
    discarded: int


@dataclass
class _Warm:
    container: Any
    created: float
    channel: Channel | None = None
    """Attached ahead of time, so taking a supervised container costs no engine call."""


class _Slot:
    """The warm containers and counters of one profile."""

    def __init__(self, profile: Profile, size: int) -> None:
        self.profile, self.size = profile, size
        self.idle: deque[_Warm] = deque()
        self.hits = self.misses = self.created = self.discarded = 0


class WarmPool:
    """A :class:`~sandbox.base.SandboxFactory` with warm containers (size 0 = off)."""

    def __init__(self, factory: DockerFactory, profiles: Iterable[tuple[Profile, int]], *,
                 max_idle_s: float = DEFAULT_MAX_IDLE_S,
                 clock: Callable[[], float] = time.time) -> None:
        self.factory, self.max_idle_s, self.clock = factory, max_idle_s, clock
        self._slots = {profile.name: _Slot(profile, size) for profile, size in profiles}
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> WarmPool:
        """Start the background refill (a no-op when every size is 0)."""
        if self._thread is None and any(slot.size for slot in self._slots.values()):
            self._thread = threading.Thread(target=self._refill_loop, name="sandbox-pool",
                                            daemon=True)
            self._thread.start()
        return self

    def acquire(self, profile: Profile, *, run_id: str) -> DockerSandbox:
        """A warm sandbox when one matches ``profile``, else a cold one.

        Raises:
            SandboxConfigError: (cold path) the image is missing or the limits are refused.
            SandboxUnavailable: (cold path) the engine is not there.
        """
        warm = self._take(profile)
        if warm is None:
            return self.factory.acquire(profile, run_id=run_id)
        return self.factory.sandbox(warm.container, warm.channel, profile, run_id=run_id)

    def stats(self) -> list[PoolStats]:
        """Counters and idle sizes per profile."""
        with self._lock:
            return [PoolStats(profile=name, target=slot.size, idle=len(slot.idle),
                              hits=slot.hits, misses=slot.misses, created=slot.created,
                              discarded=slot.discarded) for name, slot in self._slots.items()]

    def fill(self) -> None:
        """One refill pass: replace stale containers, create the missing ones."""
        for slot in list(self._slots.values()):
            self._discard_stale(slot)
            while not self._stop.is_set() and self._missing(slot) > 0:
                self._add(slot)

    def close(self) -> None:
        """Stop refilling and remove every idle container; never raises."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=30)
        with self._lock:
            warm = [w for slot in self._slots.values() for w in slot.idle]
            for slot in self._slots.values():
                slot.idle.clear()
        for item in warm:
            _remove(item)

    def _take(self, profile: Profile) -> _Warm | None:
        with self._lock:
            slot = self._slots.get(profile.name)
            if slot is None:
                return None
            dead = _pop_dead(slot)
            if slot.profile != profile or not slot.idle:
                slot.misses += 1
                warm = None
            else:
                slot.hits += 1
                warm = slot.idle.popleft()
        for item in dead:
            _remove(item)
        self._wake.set()
        return warm

    def _missing(self, slot: _Slot) -> int:
        with self._lock:
            return slot.size - len(slot.idle)

    def _add(self, slot: _Slot) -> None:
        deadline = self.clock() + self.max_idle_s + slot.profile.limits.wall_timeout_s
        owner = Ownership(self.factory.worker, WARM_RUN_ID, deadline + DEADLINE_SLACK_S,
                          pooled=True)
        container, channel = self.factory.start(slot.profile, owner)
        with self._lock:
            slot.idle.append(_Warm(container, self.clock(), channel))
            slot.created += 1

    def _discard_stale(self, slot: _Slot) -> None:
        """Drop containers idle too long, and any the engine no longer runs."""
        cutoff = self.clock() - self.max_idle_s
        running = self._running_ids() if slot.idle else set()
        with self._lock:
            stale = [w for w in slot.idle if w.created < cutoff or w.container.id not in running]
            slot.idle = deque(w for w in slot.idle if w not in stale)
            slot.discarded += len(stale)
        for item in stale:
            _remove(item)

    def _running_ids(self) -> set[str]:
        """Ids of this worker's running pooled containers (one engine call).

        Raises:
            SandboxUnavailable: the engine is not there.
        """
        filters = {"label": [f"{LABEL_POOL}=1", f"{LABEL_WORKER}={self.factory.worker}"],
                   "status": "running"}
        try:
            return {c.id for c in self.factory.client.containers.list(ignore_removed=True,
                                                                      filters=filters)}
        except (docker.errors.DockerException, OSError) as error:
            raise classify(error, what="list pool containers") from error

    def _refill_loop(self) -> None:
        backoff = REFILL_INTERVAL_S
        while not self._stop.is_set():
            try:
                self.fill()
                backoff = REFILL_INTERVAL_S
            except SandboxError as error:
                log.warning("warm pool refill failed: %s", error)
                backoff = min(backoff * 2, 60.0)
            self._wake.wait(backoff)
            self._wake.clear()


def _pop_dead(slot: _Slot) -> list[_Warm]:
    """Take out the idle containers whose supervisor hung up (the container died)."""
    dead = [w for w in slot.idle if w.channel is not None and not w.channel.open]
    if dead:
        slot.idle = deque(w for w in slot.idle if w not in dead)
        slot.discarded += len(dead)
    return dead


def _remove(warm: _Warm) -> None:
    if warm.channel is not None:
        warm.channel.close()
    with contextlib.suppress(docker.errors.DockerException, OSError):  # the reaper retries
        warm.container.remove(force=True)
