"""The admitter: one at a time in a fleet (a lease among the workers), it moves runs from
the waiting rooms into the Celery queues (:mod:`tasks.admission`).

Each step it renews its lease; forgets the runs in flight that are published; counts the
room of each queue (``queued_per_slot`` runs per slot of the live workers serving it, less
what is queued already); plans who gets that room (:func:`.shares.plan`: by weight, under
the quotas); takes those runs from their rooms and sends them in one batch. A new holder of
the lease first sends what its predecessor took but did not send (each is queued once:
``PUT_ONCE``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from celery import Celery

from .. import tenancy
from ..queueing import queue_lists
from ..redis_keys import (
    FLEET,
    LEASE_KEY,
    SLOTS_KEY,
    Keyspace,
    admission_keys,
    keyspace,
    rate_key,
)
from ..sending import Outgoing, send_runs
from .room import Parked, Room, WaitingRoom
from .scripts import LEASE
from .share import Share
from .shares import Strides, plan


@dataclass
class Admitter:
    """Admits runs while it holds the lease (:meth:`step`)."""

    redis: Any
    app: Celery
    holder: str
    """Who holds the lease when this one does (the worker's id)."""
    fleet_share: Share = field(default_factory=Share)
    queued_per_slot: int = 2
    lease_ms: int = 5000
    refresh_s: float = 5.0
    clock: Callable[[], float] = time.time
    strides: Strides = field(default_factory=Strides)
    shares: dict[Keyspace, Share] = field(default_factory=dict)
    slots: dict[str, int] = field(default_factory=dict)
    held: dict[Keyspace, str | None] = field(default_factory=dict)
    leading: bool = False
    """Whether it held the lease at its last step."""
    waiting: bool = False
    """Whether runs waited at its last step (while they do, room is looked for often)."""
    _read_at: float = float("-inf")

    def __post_init__(self) -> None:
        self.room = WaitingRoom(self.redis)
        self._lease = self.redis.register_script(LEASE)

    def step(self) -> int:
        """One round (nothing unless it holds the lease); how many runs it sent."""
        lease = int(self._lease(keys=[LEASE_KEY], args=[self.holder, self.lease_ms]))
        self.leading = bool(lease)
        if not lease:
            return 0
        self._refresh(force=lease == 2)
        sent = self.recover() if lease == 2 else 0
        rooms = self.room.rooms()
        self.waiting = bool(rooms)
        if not rooms:
            for keys, share in self.shares.items():
                self._mark(keys, share, None)
            return sent
        in_flight = self._in_flight()
        allowed = self._allowed(in_flight, rooms)
        grants = plan(self._free(rooms), {(r.queue, r.keys.owner): n for r, n in rooms.items()},
                      {k.owner: n for k, n in allowed.items()},
                      {k.owner: s.weight for k, s in self.shares.items()}, self.strides)
        return sent + self._admit(grants)

    def recover(self) -> int:
        """Send what a previous admitter took from the rooms and did not send."""
        sent = 0
        for keys in self.shares:
            sent += self._send(keys, list(self.room.unsent(keys)))
        return sent

    def release(self) -> None:
        """Give the lease up (a worker stopping), if it holds it."""
        if self.redis.get(LEASE_KEY) == self.holder.encode():
            self.redis.delete(LEASE_KEY)

    def _admit(self, grants: list[tuple[str, str, int]]) -> int:
        now, sent = self.clock(), 0
        for queue, owner, count in grants:
            keys = keyspace(None if owner == FLEET.owner else owner)
            sent += self._send(keys, self.room.take(Room(queue, keys), count, now))
        return sent

    def _send(self, keys: Keyspace, taken: list[tuple[str, Parked]]) -> int:
        """Send ``taken`` (but those published meanwhile: cancelled while waiting), then
        forget their requests."""
        if not taken:
            return 0
        with self.redis.pipeline(transaction=False) as pipe:
            for run_id, _ in taken:
                pipe.exists(keys.result(run_id))
            ended = pipe.execute()
        runs = [Outgoing(keys, run_id, p.request, p.queue, p.priority, p.entry, p.parked_at)
                for (run_id, p), gone in zip(taken, ended, strict=True) if not gone]
        send_runs(self.app, runs)
        self.room.sent(keys, [run_id for run_id, _ in taken])
        return len(runs)

    def _in_flight(self) -> dict[Keyspace, int]:
        """Each owner's runs in flight, once those published are forgotten."""
        counts = {}
        for keys in self.shares:
            key = admission_keys(keys)["in_flight"]
            members = [_text(m) for m in self.redis.zrange(key, 0, -1)]
            with self.redis.pipeline(transaction=False) as pipe:
                for run_id in members:
                    pipe.exists(keys.result(run_id))
                    pipe.exists(keys.status(run_id))
                found = pipe.execute()
            # published (its result), or forgotten (no record: expired or deleted)
            done = [m for m, result, record in zip(members, found[::2], found[1::2], strict=True)
                    if result or not record]
            if done:
                self.redis.zrem(key, *done)
            counts[keys] = len(members) - len(done)
        return counts

    def _allowed(self, in_flight: dict[Keyspace, int],
                 rooms: dict[Room, int]) -> dict[Keyspace, int | None]:
        """How many more each owner's quotas admit now; marks the held ones."""
        minute = int(self.clock() // 60)
        with self.redis.pipeline(transaction=False) as pipe:
            for keys in self.shares:
                pipe.get(rate_key(keys, minute))
            rates = dict(zip(self.shares, pipe.execute(), strict=True))
        waiting = {room.keys for room in rooms}
        allowed = {}
        for keys, share in self.shares.items():
            allowed[keys], quota = share.room(in_flight.get(keys, 0), int(rates[keys] or 0))
            self._mark(keys, share, quota if keys in waiting else None)
        return allowed

    def _mark(self, keys: Keyspace, share: Share, quota: str | None) -> None:
        """Say why ``keys``' runs wait (``quota``), or that none holds them, on change."""
        if keys.tenant is None or self.held.get(keys, "") == quota:
            return
        if quota is None:
            self.redis.delete(keys.held)
        else:
            self.redis.set(keys.held, json.dumps({"quota": quota, "limit": getattr(
                share, quota), "reason": f"its tenant allows at most {share.describe(quota)}",
                "since": self.clock()}))
        self.held[keys] = quota

    def _free(self, rooms: dict[Room, int]) -> dict[str, int]:
        """Each queue with runs waiting: how many more may be queued ahead of its workers."""
        queues = sorted({room.queue for room in rooms})
        with self.redis.pipeline(transaction=False) as pipe:
            for queue in queues:
                for name in queue_lists(queue):
                    pipe.llen(name)
            lengths = iter(pipe.execute())
        depth = {q: sum(next(lengths) for _ in queue_lists(q)) for q in queues}
        return {q: max(0, self.queued_per_slot * max(1, self.slots.get(q, 0)) - depth[q])
                for q in queues}

    def _refresh(self, force: bool = False) -> None:
        """The owners' shares and the live workers' slots, every ``refresh_s``."""
        if not force and time.monotonic() - self._read_at < self.refresh_s:
            return
        self.shares = {FLEET: self.fleet_share, **{
            Keyspace(t.name): t.share for t in tenancy.all_tenants(self.redis)}}
        self.slots = live_slots(self.redis)
        self._read_at = time.monotonic()
        if force:
            self.held.clear()


def live_slots(redis: Any) -> dict[str, int]:
    """The slots of the live workers, by queue (:data:`~tasks.redis_keys.SLOTS_KEY`)."""
    names = list(redis.scan_iter(match=SLOTS_KEY.format(worker_id="*"), count=500))
    slots: dict[str, int] = {}
    for value in redis.mget(names) if names else []:
        if value:
            concurrency, *queues = _text(value).split()
            for queue in queues:
                slots[queue] = slots.get(queue, 0) + int(concurrency)
    return slots


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
