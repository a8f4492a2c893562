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
    ACTIVE_KEY,
    FLEET,
    LEASE_KEY,
    SLOTS_KEY,
    WAITING_KEY,
    Keyspace,
    admission_keys,
    keyspace,
    rate_key,
)
from ..sending import Outgoing, send_runs
from .room import Parked, Room, WaitingRoom
from .scripts import LOOK
from .share import Share
from .shares import Strides, plan

#: The runs in flight looked at in each step, the first admitted (see ``_in_flight``).
PRUNE_HEAD = 64


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
    prune_s: float = 2.0
    """How often every run in flight is looked at (else the first :data:`PRUNE_HEAD`)."""
    _read_at: float = float("-inf")
    _pruned_at: float = float("-inf")

    def __post_init__(self) -> None:
        self.room = WaitingRoom(self.redis)
        self._look_script = self.redis.register_script(LOOK)

    def step(self) -> int:
        """One round (nothing unless it holds the lease); how many runs it sent."""
        lease, rooms, depths = self._look()
        self.leading, self.waiting = bool(lease), bool(rooms)
        if not lease:
            return 0
        self._refresh(force=lease == 2)
        sent = self.recover() if lease == 2 else 0
        if not rooms:
            for keys, share in self.shares.items():
                self._mark(keys, share, None)
            return sent
        allowed = self._allowed(self._in_flight(), rooms)
        grants = plan(self._free(depths), {(r.queue, r.keys.owner): n for r, n in rooms.items()},
                      {k.owner: n for k, n in allowed.items()},
                      {k.owner: s.weight for k, s in self.shares.items()}, self.strides)
        return sent + self._admit(grants)

    def _look(self) -> tuple[int, dict[Room, int], dict[str, int]]:
        """The lease (0: another holds it; 2: just taken), the rooms with runs waiting and
        how many, and the depth of each of their queues: one round trip (:data:`LOOK`)."""
        reply = self._look_script(keys=[LEASE_KEY, ACTIVE_KEY], args=[
            self.holder, self.lease_ms, WAITING_KEY.split("{")[0],
            *(name.rsplit(":", 1)[1] for name in queue_lists("q")[1:])])
        if not reply[0]:
            return 0, {}, {}
        lease, rooms, queues = reply
        return (int(lease), {Room.of_member(m): int(n) for m, n in zip(rooms[::2], rooms[1::2],
                                                                       strict=True)},
                {_text(q): int(n) for q, n in zip(queues[::2], queues[1::2], strict=True)})

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
        """Each owner's runs in flight, once those published are forgotten: the
        :data:`PRUNE_HEAD` admitted first at each step (runs end roughly in the order they
        were admitted), every one of them each ``prune_s``. A run that ended behind one
        still running is counted until then: a quota errs on the side of admitting less."""
        whole = time.monotonic() - self._pruned_at >= self.prune_s
        counted = [k for k, s in self.shares.items() if whole or s.max_in_flight is not None]
        if whole:
            self._pruned_at = time.monotonic()
        if not counted:  # no quota to count against: the sets are pruned every prune_s
            return {}
        with self.redis.pipeline(transaction=False) as pipe:
            for keys in counted:
                pipe.zrange(admission_keys(keys)["in_flight"], 0, -1 if whole else PRUNE_HEAD - 1)
                pipe.zcard(admission_keys(keys)["in_flight"])
            found = pipe.execute()
        heads = {keys: [_text(m) for m in members] for keys, members
                 in zip(counted, found[::2], strict=True)}
        ended = self._ended(heads)
        return {keys: int(total) - len(ended[keys])
                for keys, total in zip(counted, found[1::2], strict=True)}

    def _ended(self, heads: dict[Keyspace, list[str]]) -> dict[Keyspace, list[str]]:
        """Of each owner's ``heads``, the runs published (a result) or forgotten (no
        record: expired or deleted), now taken out of its in-flight set."""
        with self.redis.pipeline(transaction=False) as pipe:
            for keys, members in heads.items():
                for run_id in members:
                    pipe.exists(keys.result(run_id))
                    pipe.exists(keys.status(run_id))
            replies, at, ended = pipe.execute(), 0, {}
        for keys, members in heads.items():
            found = replies[at:at + 2 * len(members)]
            ended[keys] = [m for m, result, record in zip(members, found[::2], found[1::2],
                                                          strict=True) if result or not record]
            at += 2 * len(members)
        with self.redis.pipeline(transaction=False) as pipe:
            for keys, done in ended.items():
                if done:
                    pipe.zrem(admission_keys(keys)["in_flight"], *done)
            pipe.execute()
        return ended

    def _allowed(self, in_flight: dict[Keyspace, int],
                 rooms: dict[Room, int]) -> dict[Keyspace, int | None]:
        """How many more each owner's quotas admit now; marks the held ones."""
        minute = int(self.clock() // 60)
        rated = [keys for keys, share in self.shares.items() if share.max_per_minute]
        with self.redis.pipeline(transaction=False) as pipe:
            for keys in rated:
                pipe.get(rate_key(keys, minute))
            rates = dict(zip(rated, pipe.execute(), strict=True)) if rated else {}
        waiting = {room.keys for room in rooms}
        allowed = {}
        for keys, share in self.shares.items():
            allowed[keys], quota = share.room(in_flight.get(keys, 0),
                                              int(rates.get(keys) or 0))
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

    def _free(self, depths: dict[str, int]) -> dict[str, int]:
        """Each queue with runs waiting: how many more may be queued ahead of its workers
        (``depths``: how many are in its lists now)."""
        return {queue: max(0, self.queued_per_slot * max(1, self.slots.get(queue, 0)) - depth)
                for queue, depth in depths.items()}

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
