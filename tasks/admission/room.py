"""The waiting rooms: where a run waits between its intake entry and its Celery queue
while admission is on (:mod:`tasks.admission`), and what the admitter takes from them.

Each room is one owner's runs for one queue (:data:`~tasks.redis_keys.WAITING_KEY`); the
requests themselves wait in the owner's hash (:data:`~tasks.redis_keys.REQUESTS_KEY`)
until their messages are queued, so that a run taken by an admitter that dies before
sending it is still there for the next one (:meth:`WaitingRoom.unsent`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..redis_keys import (
    ACTIVE_KEY,
    ADMITTED_KEY,
    Keyspace,
    admission_keys,
    depth_key,
    flows_key,
    keyspace,
    rate_key,
    waiting_key,
)
from .scripts import PARK, TAKE
from .share import Share


@dataclass(frozen=True)
class Parked:
    """A run's request as it waits: its intake entry, queue and priority, when it was
    parked, and the request's text (sent as it came)."""

    entry: str
    queue: str
    priority: int
    parked_at: float
    request: str

    def encode(self) -> str:
        return json.dumps([self.entry, self.queue, self.priority, self.parked_at,
                           self.request])

    @classmethod
    def decode(cls, raw: Any) -> Parked:
        entry, queue, priority, parked_at, request = json.loads(raw)
        return cls(entry, queue, int(priority), float(parked_at), request)


@dataclass(frozen=True)
class Room:
    """One waiting room: an owner's runs for one queue."""

    queue: str
    keys: Keyspace

    @property
    def member(self) -> str:
        """Its name in :data:`~tasks.redis_keys.ACTIVE_KEY`."""
        return f"{self.queue} {self.keys.owner}"

    @classmethod
    def of_member(cls, member: Any) -> Room:
        queue, _, owner = _text(member).partition(" ")
        return cls(queue, keyspace(None if owner == "_" else owner))


class WaitingRoom:
    """The waiting rooms of a fleet, over one Redis client (the fleet's user)."""

    def __init__(self, redis: Any) -> None:
        self.redis = redis
        self._park = redis.register_script(PARK)
        self._take = redis.register_script(TAKE)

    def park(self, room: Room, run_id: str, flow: str, parked: Parked, share: Share,
             minute: int, client: Any = None) -> Any:
        """Park ``run_id`` in ``room`` unless it is parked or sent already (on ``client``:
        a pipeline). Its reply: 1 parked, 0 parked or sent before, or the name of the
        quota it is over when ``share`` refuses over quota (nothing parked)."""
        own = admission_keys(room.keys)
        keys = [waiting_key(room.queue, room.keys), flows_key(room.queue, room.keys),
                own["requests"], own["count"], own["in_flight"], depth_key(room.queue),
                ACTIVE_KEY, room.keys.status(run_id), rate_key(room.keys, minute)]
        refuse = share.over_quota == "refuse"
        args = [run_id, flow, parked.priority, parked.encode(), room.member,
                _limit(share.max_in_flight), _limit(share.max_per_minute),
                "1" if refuse else ""]
        return self._park(keys=keys, args=args, client=client)

    def take(self, room: Room, count: int, now: float) -> list[tuple[str, Parked]]:
        """Up to ``count`` runs of ``room``, first by score, now in flight."""
        own = admission_keys(room.keys)
        keys = [waiting_key(room.queue, room.keys), flows_key(room.queue, room.keys),
                own["requests"], own["count"], own["in_flight"], depth_key(room.queue),
                ACTIVE_KEY, rate_key(room.keys, int(now // 60)), ADMITTED_KEY]
        reply = self._take(keys=keys, args=[count, room.member, repr(now), room.keys.owner])
        pairs = zip(reply[::2], reply[1::2], strict=True)
        return [(_text(run_id), Parked.decode(raw)) for run_id, raw in pairs if raw]

    def sent(self, keys: Keyspace, run_ids: list[str]) -> None:
        """Forget the requests of ``run_ids``: their messages are queued."""
        if run_ids:
            self.redis.hdel(admission_keys(keys)["requests"], *run_ids)

    def rooms(self) -> dict[Room, int]:
        """Every room with runs waiting, and how many (one round trip after the set)."""
        rooms = [Room.of_member(m) for m in self.redis.smembers(ACTIVE_KEY)]
        with self.redis.pipeline(transaction=False) as pipe:
            for room in rooms:
                pipe.zcard(waiting_key(room.queue, room.keys))
            counts = pipe.execute()
        return {room: int(n) for room, n in zip(rooms, counts, strict=True) if n}

    def unsent(self, keys: Keyspace) -> Iterator[tuple[str, Parked]]:
        """The runs of ``keys`` taken from their rooms but not sent (an admitter died
        between the two), a page at a time."""
        requests = admission_keys(keys)["requests"]
        cursor: Any = 0
        while True:
            cursor, page = self.redis.hscan(requests, cursor, count=500)
            yield from self._not_waiting(keys, {_text(k): Parked.decode(v)
                                                for k, v in page.items()})
            if int(cursor) == 0:
                return

    def _not_waiting(self, keys: Keyspace,
                     page: dict[str, Parked]) -> list[tuple[str, Parked]]:
        with self.redis.pipeline(transaction=False) as pipe:
            for run_id, parked in page.items():
                pipe.zscore(waiting_key(parked.queue, keys), run_id)
            scores = pipe.execute()
        return [(run_id, parked) for (run_id, parked), score
                in zip(page.items(), scores, strict=True) if score is None]


def _limit(value: int | None) -> str:
    return "" if value is None else str(value)


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
