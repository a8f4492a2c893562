"""A warm pool: started containers per profile, refilled in the background, and, for a
profile that reuses its sandboxes, containers back from a run after a verified reset.

Taking a warm sandbox costs no container creation on the run's path: the container was
created and started earlier by the refill thread. A request whose profile differs from the
pooled one (clamped limits, another network) is a miss and gets a cold sandbox. Labels
cannot change after creation, so a pooled container's ``evalfleet.run_id`` stays ``warm``;
the run id lives on the sandbox object.

Without reuse (``reuse_runs`` 1, the default) each container serves exactly one run and is
then removed by :meth:`DockerSandbox.close`; nothing ever goes back into the pool.

With reuse (``reuse_runs`` N > 1, :mod:`sandbox.docker.reuse`) closing a pooled sandbox
hands it back (on the caller's thread: the worker's closer, off the run's path). The pool
removes it when a reason says so (counted by reason), else has its supervisor reset it and,
verified, puts it back at the front of the idle queue: a busy process keeps reusing the
same container while the others age out. A take waits up to :data:`RETURN_WAIT_S` for a
container being handed back rather than starting a cold one. Containers count towards the
pool's size while out (in a run, or being reset), except during their last run, whose
replacement the refill starts at the take.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import docker.errors

from evalfleet.sandbox.docker import removal
from evalfleet.sandbox.docker.channel import Channel
from evalfleet.sandbox.docker.driver import DockerSandbox
from evalfleet.sandbox.docker.factory import DEADLINE_SLACK_S, DockerFactory
from evalfleet.sandbox.docker.failure import classify
from evalfleet.sandbox.docker.labels import LABEL_POOL, LABEL_WORKER, WARM_RUN_ID
from evalfleet.sandbox.docker.lifeline import Line, supervisor
from evalfleet.sandbox.docker.limits import Ownership
from evalfleet.sandbox.docker.listing import labelled
from evalfleet.sandbox.docker.reuse import ResetOutcome, Reuse, limits_hit, reset_peak
from evalfleet.sandbox.errors import SandboxError
from evalfleet.sandbox.profile import Profile

log = logging.getLogger(__name__)

#: Seconds a warm container may wait before it is replaced by a fresh one.
DEFAULT_MAX_IDLE_S = 600.0
#: Seconds between refill passes when nothing wakes the thread.
REFILL_INTERVAL_S = 1.0
#: Seconds a take waits for a reusable container being handed back before going cold.
RETURN_WAIT_S = 2.0
#: Called with the profile's name after every reset (metrics).
ResetHook = Callable[[str, ResetOutcome], None]


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
    """Never-used containers removed (idle too long, or dead)."""
    reuse_runs: int = 1
    """Runs one container may serve (1: no reuse)."""
    reuses: int = 0
    """Takes of a container that had served a run before (after its verified reset)."""
    discards: Mapping[str, int] = field(default_factory=dict)
    """Used containers removed instead of reused, by reason (``sandbox.docker.reuse``)."""


@dataclass
class _Warm:
    container: Any
    created: float
    line: Line | None = None
    """Attached ahead of time, so taking a container costs no engine call."""
    reusable: bool = False
    """Started to serve several runs (its supervisor resets it)."""
    runs: int = 0
    """Runs it has served."""
    cpu_base_s: float | None = None
    """Its cgroup's CPU time after the last reset."""
    peak_rebased: bool = False
    """Whether its cgroup's peak memory was reset after the last reset."""
    counted: bool = False
    """Out in a run, and counted towards the pool's size (it may come back)."""
    environments: dict[Any, Any] = field(default_factory=dict)
    """Its measures before seeding (:attr:`sandbox.docker.reuse.Reuse.environments`)."""

    @property
    def channel(self) -> Channel | None:
        """Its supervisor's channel (``None``: driven by ``exec``)."""
        return supervisor(self.line)


class _Slot:
    """The warm containers and counters of one profile."""

    def __init__(self, profile: Profile, size: int) -> None:
        self.profile, self.size = profile, size
        self.idle: deque[_Warm] = deque()
        self.hits = self.misses = self.created = self.discarded = self.reuses = 0
        self.out = 0
        """Reusable containers out in a run that may come back."""
        self.discards: Counter[str] = Counter()


class WarmPool:
    """A :class:`~sandbox.base.SandboxFactory` with warm containers (size 0 = off)."""

    def __init__(self, factory: DockerFactory, profiles: Iterable[tuple[Profile, int]], *,
                 max_idle_s: float = DEFAULT_MAX_IDLE_S,
                 clock: Callable[[], float] = time.time,
                 on_reset: ResetHook | None = None,
                 on_filled: Callable[[list[PoolStats]], None] | None = None) -> None:
        self.factory, self.max_idle_s, self.clock = factory, max_idle_s, clock
        self.on_reset, self.on_filled = on_reset, on_filled
        self._slots = {profile.name: _Slot(profile, size) for profile, size in profiles}
        self._lock = threading.Condition()
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
        reused = Reuse(run=warm.runs + 1, cpu_base_s=warm.cpu_base_s,
                       peak_rebased=warm.peak_rebased, environments=warm.environments)
        sandbox = self.factory.sandbox(warm.container, warm.line, profile, run_id=run_id,
                                       reused=reused)
        if warm.reusable:
            sandbox.release = functools.partial(self._hand_back, self._slots[profile.name], warm)
        return sandbox

    def stats(self) -> list[PoolStats]:
        """Counters and idle sizes per profile."""
        with self._lock:
            return [PoolStats(profile=name, target=slot.size, idle=len(slot.idle),
                              hits=slot.hits, misses=slot.misses, created=slot.created,
                              discarded=slot.discarded, reuse_runs=slot.profile.reuse_runs,
                              reuses=slot.reuses, discards=dict(slot.discards))
                    for name, slot in self._slots.items()]

    def fill(self) -> None:
        """One refill pass: replace stale containers, create the missing ones; then tell
        ``on_filled`` the counters when a container was added (the idle gauges move
        between runs too, not only when a run reports them)."""
        added = 0
        for slot in list(self._slots.values()):
            self._discard_stale(slot)
            while not self._stop.is_set() and self._missing(slot) > 0:
                self._add(slot)
                added += 1
        if added and self.on_filled is not None:
            self.on_filled(self.stats())

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
            if slot.profile == profile and not slot.idle and slot.out:
                self._lock.wait_for(lambda: bool(slot.idle) or not slot.out, RETURN_WAIT_S)
                dead += _pop_dead(slot)
            if slot.profile != profile or not slot.idle:
                slot.misses += 1
                warm = None
            else:
                slot.hits += 1
                warm = slot.idle.popleft()
                slot.reuses += warm.runs > 0
                warm.counted = warm.reusable and warm.runs + 1 < slot.profile.reuse_runs
                slot.out += warm.counted
        for item in dead:
            _remove(item)
        self._refill_if_short(slot)
        return warm

    def _hand_back(self, slot: _Slot, warm: _Warm, sandbox: DockerSandbox) -> None:
        """A reusable sandbox's run is over: reset it and keep it, or remove it."""
        reason = self._discard_reason(slot, warm, sandbox)
        if reason is None:
            outcome = sandbox.reset()
            if self.on_reset is not None:
                self.on_reset(slot.profile.name, outcome)
            reason = _reset_verdict(sandbox, outcome)
            if reason is None:
                warm.runs += 1
                warm.cpu_base_s = None if outcome.cpu_ns is None else outcome.cpu_ns / 1e9
                warm.peak_rebased = not sandbox.gvisor and reset_peak(sandbox.id)
        with self._lock:
            slot.out -= warm.counted
            warm.counted = False
            if reason is None and not self._stop.is_set():
                slot.idle.appendleft(warm)
            else:
                slot.discards[reason or "closing"] += 1
            self._lock.notify_all()
        if reason is not None or self._stop.is_set():
            sandbox.conduit.close()
        self._refill_if_short(slot)

    def _discard_reason(self, slot: _Slot, warm: _Warm, sandbox: DockerSandbox) -> str | None:
        """Why a used container may not serve another run (``None``: reset it)."""
        alive = sandbox.conduit.retire()
        if self._stop.is_set():
            return "closing"
        hit = limits_hit(sandbox) or (None if alive else "deadline")
        if hit is not None:
            return hit
        if warm.runs + 1 >= slot.profile.reuse_runs:
            return "runs"
        if warm.channel is None or not warm.channel.open or not warm.channel.in_step:
            return "broken"
        if self.clock() - warm.created > self.max_idle_s:
            return "expired"  # it could not end another run before its labelled deadline
        return None

    def _missing(self, slot: _Slot) -> int:
        with self._lock:
            return slot.size - len(slot.idle) - slot.out

    def _refill_if_short(self, slot: _Slot) -> None:
        """Wake the refill when ``slot`` is below its size. Not otherwise: each pass lists
        the engine's containers, and a reused container coming and going would cost the
        engine a listing per run (the periodic pass checks for stale ones)."""
        if self._missing(slot) > 0:
            self._wake.set()

    def _add(self, slot: _Slot) -> None:
        deadline = self.clock() + self.max_idle_s + slot.profile.limits.wall_timeout_s
        owner = Ownership(self.factory.worker, WARM_RUN_ID, deadline + DEADLINE_SLACK_S,
                          pooled=True)
        container, line = self.factory.start(slot.profile, owner)
        reusable = supervisor(line) is not None and self.factory.reusable(slot.profile)
        with self._lock:
            slot.idle.append(_Warm(container, self.clock(), line, reusable=reusable))
            slot.created += 1

    def _discard_stale(self, slot: _Slot) -> None:
        """Drop containers idle too long, and any the engine no longer runs."""
        cutoff = self.clock() - self.max_idle_s
        running = self._running_ids() if slot.idle else set()
        with self._lock:
            stale = [w for w in slot.idle if w.created < cutoff or w.container.id not in running]
            slot.idle = deque(w for w in slot.idle if w not in stale)
            slot.discarded += sum(1 for w in stale if not w.runs)
            slot.discards.update("expired" for w in stale if w.runs)
        for item in stale:
            _remove(item)

    def _running_ids(self) -> set[str]:
        """Ids of this worker's running pooled containers (one engine call).

        Raises:
            SandboxUnavailable: the engine is not there.
        """
        labels = [f"{LABEL_POOL}=1", f"{LABEL_WORKER}={self.factory.worker}"]
        try:
            return {c.id for c in labelled(self.factory.client, labels, status="running")}
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


def _reset_verdict(sandbox: DockerSandbox, outcome: ResetOutcome) -> str | None:
    """The discard reason a reset gives (``None``: verified, keep the container)."""
    if not outcome.verified:
        log.warning("sandbox %s not reused: its reset is not verified: %s", sandbox.id[:12],
                    outcome.reason)
        return "unverified"
    if outcome.oom_kills:
        return "oom"  # a background process met the memory limit during the run
    return None


def _pop_dead(slot: _Slot) -> list[_Warm]:
    """Take out the idle containers whose supervisor hung up (the container died)."""
    dead = [w for w in slot.idle if w.channel is not None and not w.channel.open]
    if dead:
        slot.idle = deque(w for w in slot.idle if w not in dead)
        slot.discarded += sum(1 for w in dead if not w.runs)
        slot.discards.update("broken" for w in dead if w.runs)
    return dead


def _remove(warm: _Warm) -> None:
    removal.remove(warm.container, line=warm.line)
