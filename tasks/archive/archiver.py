"""The archiver: every published result into the archive, acknowledged only once the
store has it.

It reads ``evalfleet:results`` through its own consumer group (``evalfleet-archive``,
:data:`~tasks.redis_keys.ARCHIVE_GROUP`): first what this consumer read and did not
acknowledge (it stopped, or the store failed), then what another archiver left for
``claim_after_ms`` (it died), then new entries. For each it reads the result's body and the
status record, writes them (:meth:`.archive.Archive.write`), and then, in one transaction,
starts the result's and the record's TTL (``EXPIRE … NX``: only if none runs yet) and
acknowledges the entry. The group's existence is what turns the archive on: while it
exists, publication keeps results without expiry and never trims the stream past the
group's oldest unacknowledged entry (:mod:`tasks.lifecycle`). So a result leaves Redis
only after it is in the store.

A crash between the write and the acknowledgement writes the run again later: the same
bytes at the same keys, so every result is archived exactly once. A store that fails stops
the batch (the rest stay pending, in order), and the archiver waits, doubling the wait up
to ``max_backoff_s``, before it tries again; :mod:`.backlog` refuses new runs before the
results held back could fill Redis.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import redis

from .. import tenancy
from ..redis_keys import ARCHIVE_GROUP, ARCHIVE_REFUSAL_KEY, FLEET, Keyspace
from . import layout
from .archive import Archive
from .backlog import Limits, backlog_of, refusal
from .errors import StoreError
from .record import ArchivedRun, text_record

log = logging.getLogger(__name__)

#: Entries read per round trip.
READ_COUNT = 100
#: How long a refusal lives unless an archiver renews it (a fleet that stopped refuses
#: nothing for long).
REFUSAL_TTL_S = 60
# Written even into a full Redis (it is what tells the clients why).
_SET_REFUSAL = """#!lua flags=allow-oom
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
return 1
"""


@dataclass
class Tally:
    """What one archiver did (the worker's metrics read it)."""

    archived: int = 0
    bytes: int = 0
    failures: int = 0
    """Writes the store refused or could not take (each retried later)."""
    missing: int = 0
    """Entries whose result was gone from Redis before it could be archived (published
    before the archive was on, and expired)."""
    last_error: str = ""


@dataclass
class Archiver:
    """Archives the results stream's entries through the archive group."""

    redis: Any
    archive: Archive
    consumer: str
    ttl_s: int = 7 * 24 * 3600
    """The TTL a result and its status record get once archived."""
    claim_after_ms: int = 60_000
    limits: Limits = field(default_factory=Limits)
    backoff_s: float = 0.5
    max_backoff_s: float = 30.0
    guard_every_s: float = 2.0
    clock: Callable[[], float] = time.monotonic
    tally: Tally = field(default_factory=Tally)
    refresh_s: float = 5.0
    """How often the tenants are read again (each tenant's results stream is archived
    under its own prefix: :meth:`.archive.Archive.of_tenant`)."""
    _archives: dict[Keyspace, Archive] = field(default_factory=dict)
    _wait_s: float = 0.0
    _resume_at: float = 0.0
    _guarded_at: float = float("-inf")
    _refusing: bool = False

    def __post_init__(self) -> None:
        self._archives[FLEET] = self.archive
        self.results = tenancy.TenantStreams(self.redis, ARCHIVE_GROUP, self.consumer,
                                             lambda keys: keys.results_stream, self.refresh_s)

    def ensure_group(self) -> None:
        """:func:`ensure_group` on every results stream it archives.

        Raises:
            redis.RedisError: Redis refused (not because the group exists).
        """
        self.results.ensure_groups()

    def step(self, block_ms: int = 1000) -> int:
        """One round: keep the refusal up to date, then archive one read's entries (none
        while backing off); returns how many were archived.

        Raises:
            redis.RedisError: Redis could not be read or written (the caller retries).
        """
        self._guard()
        self.results.refresh()  # a new tenant's stream gets the group: kept until archived
        if self.clock() < self._resume_at:
            time.sleep(min(0.2, self._resume_at - self.clock()))
            return 0
        try:
            entries = self._own() or self._claimed() or self._new(block_ms)
        except redis.ResponseError as err:
            if "NOGROUP" not in str(err):
                raise
            self.ensure_group()  # the stream or group was deleted (FLUSHDB): recreate
            return 0
        archived = sum(self._archive(keys, found) for keys, found in entries)
        if archived and self._refusing:
            self._guarded_at = float("-inf")  # lift the refusal as soon as it can be
        return archived

    def _own(self) -> tenancy.Read:
        return self.results.read("0", READ_COUNT)

    def _claimed(self) -> tenancy.Read:
        return self.results.claimed(self.claim_after_ms, READ_COUNT)

    def _new(self, block_ms: int) -> tenancy.Read:
        return self.results.read(">", READ_COUNT, block_ms)

    def _archive(self, keys: Keyspace, entries: list[Any]) -> int:
        """Write one stream's ``entries``' runs in order, until the store fails;
        acknowledge those written (and those whose result is gone)."""
        done: list[tuple[bytes, str]] = []
        for (entry_id, fields), (body, record) in zip(entries, self._read(keys, entries),
                                                      strict=True):
            run_id = _text((fields or {}).get(b"run_id", b""))
            if not self._written(self._archive_of(keys), (entry_id, run_id), body, record):
                break
            done.append((entry_id, run_id))
        self._settle(keys, done)
        return len(done)

    def _archive_of(self, keys: Keyspace) -> Archive:
        if keys not in self._archives:
            self._archives[keys] = self.archive.of_tenant(keys.tenant)
        return self._archives[keys]

    def _read(self, keys: Keyspace,
              entries: list[Any]) -> list[tuple[bytes | None, dict[str, str]]]:
        """Each entry's result body and status record (one round trip)."""
        with self.redis.pipeline(transaction=False) as pipe:
            for _, fields in entries:
                run_id = _text((fields or {}).get(b"run_id", b""))
                pipe.get(keys.result(run_id))
                pipe.hgetall(keys.status(run_id))
            replies = pipe.execute()
        return [(replies[i], text_record(replies[i + 1])) for i in range(0, len(replies), 2)]

    def _written(self, archive: Archive, entry: tuple[bytes, str], body: bytes | None,
                 record: dict[str, str]) -> bool:
        """Write one run; False when the store failed (then back off)."""
        entry_id, run_id = entry
        if body is None:  # gone before the archive was on: nothing left to keep
            self.tally.missing += 1
            log.warning("archive: the result of %s was gone from Redis before it could be "
                        "archived", run_id or "a trimmed entry")
            return True
        day = layout.day_of(int(_text(entry_id).partition("-")[0]) / 1000)
        try:
            size = archive.write(ArchivedRun(run_id, body, record), day, record.get("match"))
        except StoreError as err:
            self._failed(err)
            return False
        self.tally.archived, self.tally.bytes = self.tally.archived + 1, self.tally.bytes + size
        self._wait_s = 0.0
        return True

    def _failed(self, err: StoreError) -> None:
        self.tally.failures += 1
        self.tally.last_error = str(err)
        self._wait_s = min(self.max_backoff_s, max(self.backoff_s, 2 * self._wait_s))
        self._resume_at = self.clock() + self._wait_s
        log.warning("archive: %s; results stay in Redis, next try in %.1f s", err,
                    self._wait_s)

    def _settle(self, keys: Keyspace, done: list[tuple[bytes, str]]) -> None:
        """Start the TTL of what was written and acknowledge it, in one transaction."""
        if not done:
            return
        with self.redis.pipeline(transaction=True) as pipe:
            for _, run_id in done:
                pipe.expire(keys.result(run_id), self.ttl_s, nx=True)
                pipe.expire(keys.status(run_id), self.ttl_s, nx=True)
            pipe.xack(keys.results_stream, ARCHIVE_GROUP, *(entry_id for entry_id, _ in done))
            pipe.execute()

    def _guard(self) -> None:
        """Refuse new runs while the backlog would outgrow Redis (every ``guard_every_s``)."""
        if self.clock() - self._guarded_at < self.guard_every_s:
            return
        self._guarded_at = self.clock()
        reason = refusal(backlog_of(self.redis), self.limits)
        self._refusing = reason is not None
        if reason is None:
            self.redis.delete(ARCHIVE_REFUSAL_KEY)
        else:
            self.redis.eval(_SET_REFUSAL, 1, ARCHIVE_REFUSAL_KEY, reason, REFUSAL_TTL_S)
            log.warning("archive: refusing new runs: %s", reason)


def ensure_group(client: Any, stream: str = FLEET.results_stream) -> None:
    """Create the archive group at the stream's start (turning the archive on): every
    result the stream still names is archived, those published before included. The
    worker does it before it takes a run, so that no result of its is published with its
    TTL running before the archive has it.

    Raises:
        redis.RedisError: Redis refused (not because the group exists).
    """
    tenancy.make_group(client, stream, ARCHIVE_GROUP)


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
