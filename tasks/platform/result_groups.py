"""The consumer groups of the results stream, and how far behind each one is.

Read by the metrics (``evalfleet_results_group_*``) and by the client, which warns when a
group comes back after results it never read have expired. Redis counts a group's ``lag``
as results added to the stream minus results delivered to the group, so results trimmed
before the group read them are still in it; only Redis 7 reports it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import redis

from ..redis_keys import RESULTS_STREAM


@dataclass(frozen=True)
class GroupState:
    """One consumer group of ``evalfleet:results``."""

    name: str
    lag: int | None
    """Results published and not yet delivered to the group (None: Redis cannot tell)."""
    pending: int
    """Results delivered to a consumer of the group and not yet acknowledged."""
    behind_s: float
    """How long ago the oldest result not yet delivered was published (0: caught up)."""
    missed: int
    """Results that left the stream (their TTL passed) before the group read them."""


def group_states(client: Any, stream: str = RESULTS_STREAM) -> list[GroupState]:
    """Every consumer group of the results stream (a tenant's: ``stream``; none when
    there is no stream)."""
    try:
        groups = client.xinfo_groups(stream)
    except redis.ResponseError:  # no stream yet
        return []
    length = int(client.xlen(stream))
    first = client.xrange(stream, count=1)
    first_id = _id(first[0][0]) if first else None
    seconds, micros = client.time()
    now_ms = int(seconds) * 1000 + int(micros) // 1000
    return [_state((client, stream), group, length, first_id, now_ms) for group in groups]


def _state(on: tuple[Any, str], group: dict[str, Any], length: int,
           first_id: tuple[int, int] | None, now_ms: int) -> GroupState:
    lag = None if group.get("lag") is None else int(group["lag"])
    gap = first_id is not None and _id(group["last-delivered-id"]) < first_id
    return GroupState(name=_text(group["name"]), lag=lag, pending=int(group["pending"]),
                      behind_s=_behind_s(on, group["last-delivered-id"], now_ms),
                      missed=max(0, lag - length) if gap and lag is not None else 0)


def _behind_s(on: tuple[Any, str], delivered: bytes | str, now_ms: int) -> float:
    client, stream = on
    following = client.xrange(stream, min=f"({_text(delivered)}", count=1)
    if not following:
        return 0.0
    return max(0.0, (now_ms - _id(following[0][0])[0]) / 1000)


def missed_by(client: Any, group: str, stream: str = RESULTS_STREAM) -> int:
    """How many results expired from the stream before ``group`` read them."""
    return sum(s.missed for s in group_states(client, stream) if s.name == group)


def _id(entry_id: bytes | str) -> tuple[int, int]:
    ms, _, seq = _text(entry_id).partition("-")
    return int(ms), int(seq or 0)


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
