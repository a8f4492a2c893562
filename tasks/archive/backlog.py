"""How far behind the archive is, and when that must refuse new runs.

While the archive is on, Redis keeps every result the archivers have not yet written (no
TTL runs on it): a store that is down makes Redis grow by one result per run. Before that
growth can reach ``maxmemory`` (where Redis refuses every write, publications included),
the archivers refuse new runs at submission, with the reason, and lift the refusal once
the backlog is written. Runs already queued still run and publish: the headroom left
(``1 - refuse_at``) is theirs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import redis

from .. import tenancy
from ..redis_keys import ARCHIVE_GROUP, FLEET, keyspace


@dataclass(frozen=True)
class Backlog:
    """The archive's backlog and Redis's memory, read together."""

    results: int
    """Results published and not yet archived (delivered or not)."""
    used_bytes: int
    max_bytes: int
    """Redis's ``maxmemory`` (0: none set)."""


@dataclass(frozen=True)
class Limits:
    """When a backlog refuses new runs."""

    refuse_at: float = 0.8
    """The fraction of ``maxmemory`` in use past which a backlog refuses new runs."""
    max_results: int = 0
    """A backlog of this many results refuses new runs whatever the memory (0: no cap;
    for a Redis without ``maxmemory``)."""


def backlog_of(client: Any) -> Backlog:
    """The archive group's backlog (0 when the archive is off) and Redis's memory.

    Raises:
        redis.RedisError: Redis could not be read.
    """
    memory = client.info("memory")
    return Backlog(results=archive_backlog(client), used_bytes=int(memory["used_memory"]),
                   max_bytes=int(memory.get("maxmemory", 0)))


def archive_backlog(client: Any) -> int:
    """Results the archive group has not acknowledged, on the fleet's results stream and
    every tenant's: not yet delivered (its ``lag``) plus delivered and pending; 0 without
    the group.

    Raises:
        redis.RedisError: Redis could not be read (but for a missing stream).
    """
    streams = [FLEET.results_stream,
               *(keyspace(name).results_stream for name in tenancy.names(client))]
    return sum(_stream_backlog(client, stream) for stream in streams)


def _stream_backlog(client: Any, stream: str) -> int:
    try:
        groups = client.xinfo_groups(stream)
    except redis.ResponseError:  # no stream
        return 0
    for group in groups:
        if _text(group["name"]) == ARCHIVE_GROUP:
            return int(group.get("lag") or 0) + int(group["pending"])
    return 0


def refusal(backlog: Backlog, limits: Limits) -> str | None:
    """Why new runs must wait for the archive, or None when they need not."""
    if backlog.results == 0:
        return None
    behind = f"{backlog.results} result{'' if backlog.results == 1 else 's'} behind"
    if limits.max_results and backlog.results >= limits.max_results:
        return (f"the archive is {behind} (the most allowed is "
                f"{limits.max_results}): the object store is down or too slow; new runs "
                "are refused until it catches up, so that no result is lost")
    if backlog.max_bytes and backlog.used_bytes >= limits.refuse_at * backlog.max_bytes:
        share = 100 * backlog.used_bytes / backlog.max_bytes
        return (f"Redis is {share:.0f}% full and the archive is {behind} (the object "
                "store is down or too slow): new runs are refused until it catches up, so "
                "that no result is lost")
    return None


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
