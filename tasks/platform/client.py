"""The client a platform uses: submit runs, then read their results back from Redis.

    client = EvalfleetClient("redis://localhost:6379/0")
    run_id = client.submit({"run_id": "r1", "pack_ref": "fizzbuzz", "submission": {...}})
    client.submit_batch(many_requests)                # pipelined: thousands per second
    client.status(run_id)                             # queued, running (where), ended (how)
    result = client.wait(run_id, timeout=60)          # a RunResult
    client.cancel(run_id)                             # never starts, or its sandbox stops
    for result in client.wait_many("match-7", 600):   # a match's results as they arrive
        ...
    for result in client.results(group="leaderboard"):  # every result, resumable
        ...

It needs only ``redis`` and ``pydantic`` (``pip install evalfleet``): runs go into the
intake stream (:mod:`.submission`), and the workers' forwarders queue them. Given the
fleet's archive (``archive_url``: ``file://…`` or ``s3://…``, which needs
``evalfleet[archive]``), ``result``, ``status``, ``wait`` and ``runs`` find a run there once
Redis has forgotten it (its TTL passed).
:class:`~.async_client.AsyncEvalfleetClient` has the same verbs for asyncio.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from typing import Any

import redis
from pydantic import ValidationError

from ..archive import Archive
from ..lifecycle import Cancelled, Lifecycle
from ..messages import RunRequest, RunResult
from ..redis_connection import connect
from ..status import RunStatus
from ..tenancy import keys_of
from . import cancels, reading, submission
from .reading import FETCH_CHUNK, READ_COUNT
from .result_groups import missed_by
from .submission import SUBMIT_CHUNK, SubmitError


class EvalfleetClient:
    """Submit runs to the fleet and read their results."""

    def __init__(self, redis_url: str, *, status_ttl_s: int = 7 * 24 * 3600,
                 seal: cancels.Seal = cancels.unsigned,
                 archive_url: str | None = None, tenant: str | None = None) -> None:
        """``tenant``: whose runs this client submits and reads; by default the tenant whose
        Redis user ``redis_url`` names (``evalfleet-tenant-<name>``), else the fleet's own
        keys (a fleet without tenants). The fleet takes a run's tenant from the stream it
        came in by, never from this.

        Raises:
            tasks.tenancy.TenantError: ``tenant`` is not a tenant's name.
            RedisURLError: ``redis_url`` is a Sentinel URL evalfleet cannot read.
            ValueError: ``archive_url`` is not a store's URL.
            tasks.archive.StoreError: an ``s3://`` archive without boto3.
        """
        self.redis: Any = connect(redis_url)
        self.keys = keys_of(self.redis, tenant)
        """Where its runs live (:class:`~tasks.redis_keys.Keyspace`)."""
        self.status_ttl_s = status_ttl_s
        """How long a ``queued`` record lives until a worker takes the run (then as long
        as its result: ``EVALFLEET_RESULT_TTL_S``)."""
        self.lifecycle = Lifecycle(self.redis, status_ttl_s, self.keys)
        self.seal = seal
        """How the cancels this client publishes are written: unsigned, unless given a
        signer's ``seal`` (:class:`~tasks.signatures.Signer`: the fleet's key, or the
        platform's own that its verifiers trust)."""
        self.archive = Archive.at(archive_url) if archive_url else None
        """Where runs are found once Redis has forgotten them (None: nowhere)."""

    def submit(self, request: RunRequest | dict[str, Any]) -> str:
        """Validate and enqueue one run; returns its run id.

        Raises:
            pydantic.ValidationError: the request is not a valid RunRequest.
            SubmitError: Redis did not take it (full or unreachable).
        """
        return self.submit_batch([request])[0]

    def submit_many(self, requests: Iterable[RunRequest | dict[str, Any]]) -> list[str]:
        """:meth:`submit_batch` (kept for the callers that know it by this name)."""
        return self.submit_batch(requests)

    def submit_batch(self, requests: Iterable[RunRequest | dict[str, Any]],
                     chunk: int = SUBMIT_CHUNK) -> list[str]:
        """Validate every request, then add them to the intake stream, ``chunk`` per
        pipelined round trip; returns their run ids.

        Raises:
            pydantic.ValidationError: a request is invalid (nothing is enqueued).
            SubmitError: Redis refused runs (full): ``enqueued`` are those it took,
                ``not_enqueued`` those it refused and every later one; or a round trip's
                replies never came (unreachable): its runs are ``uncertain`` too.
        """
        checked = submission.checked(requests)
        sent: list[str] = []
        for part in submission.chunks(checked, chunk):
            try:
                with self.redis.pipeline(transaction=False) as pipe:
                    for call in submission.calls(part, self.status_ttl_s, self.keys):
                        call.on(pipe)
                    replies = pipe.execute(raise_on_error=False)
            except redis.RedisError as err:
                raise submission.lost(sent, part, checked, err) from err
            sent = submission.settle(sent, part, replies, checked)
        return sent

    def result(self, run_id: str) -> RunResult | None:
        """The published result of ``run_id`` (from the archive once Redis forgot it), or
        None if there is none (yet).

        Raises:
            tasks.archive.StoreError: Redis has none and the archive could not be read.
        """
        found = reading.result(self.redis.get(self.keys.result(run_id)))
        if found is None and self.archive is not None:
            return self.archive.result(run_id)
        return found

    def status(self, run_id: str) -> RunStatus | None:
        """Where ``run_id`` stands: ``queued``, ``running`` (which worker, which attempt) or
        how it ended, with the time of each transition; ``None`` for a run the fleet does
        not know (never submitted, or past its result's TTL and not in the archive).

        Raises:
            tasks.archive.StoreError: Redis has none and the archive could not be read.
        """
        with self.redis.pipeline(transaction=False) as pipe:
            pipe.hgetall(self.keys.status(run_id))
            pipe.get(self.keys.held)
            record, held = pipe.execute()
        found = RunStatus.from_record(run_id, record, held)
        if found is None and self.archive is not None:
            return self.archive.status(run_id)
        return found

    def cancel(self, run_id: str) -> Cancelled:
        """Cancel a run: a queued run never starts; a running run's sandbox is stopped; its
        one result is ``cancelled`` (no scorecard). A finished run is left as it is:
        ``what`` says ``finished`` (``was``: how it ended), or ``unknown``."""
        return cancels.cancel(self.lifecycle, run_id, self.seal)

    def cancel_match(self, match: str) -> list[Cancelled]:
        """:meth:`cancel` every run of ``match``; one answer each."""
        return cancels.cancel_match(self.lifecycle, match, self.seal)

    def runs(self, match: str) -> list[RunStatus]:
        """The runs of ``match`` with their statuses, in the order they were submitted;
        with an archive, its runs of the match that Redis has forgotten too (first).

        Raises:
            tasks.archive.StoreError: the archive could not be listed or read.
        """
        run_ids = cancels.match_runs(self.redis, match, self.keys)
        with self.redis.pipeline(transaction=False) as pipe:
            for run_id in run_ids:
                pipe.hgetall(self.keys.status(run_id))
            known = reading.statuses(run_ids, pipe.execute())
        if self.archive is None:
            return known
        return [*reading.archived_runs(self.archive, match, {s.run_id for s in known}),
                *known]

    def wait_many(self, runs: str | Iterable[str], timeout: float = 300.0) -> Iterator[RunResult]:
        """The results of ``runs`` (run ids, or a match's name: its runs when called) as
        they are published, in that order.

        Raises:
            TimeoutError: ``timeout`` seconds passed with results missing (named).
        """
        waiting = ({s.run_id for s in self.runs(runs)} if isinstance(runs, str)
                   else set(runs))
        deadline = time.monotonic() + timeout
        with self.redis.pubsub(ignore_subscribe_messages=True) as pubsub:
            pubsub.subscribe(self.keys.results_channel)
            while waiting:
                for found in self._published(waiting):
                    waiting.discard(found.run_id)
                    yield found
                if waiting and not _heard(pubsub, waiting, deadline):
                    raise reading.no_result(waiting, timeout)

    def _published(self, run_ids: set[str]) -> list[RunResult]:
        """The results of ``run_ids`` published so far (one round trip)."""
        ordered = sorted(run_ids)
        return reading.published(self.redis.mget([self.keys.result(r) for r in ordered]))

    def wait(self, run_id: str, timeout: float = 300.0) -> RunResult:
        """Block until ``run_id``'s result is published (the archive, if any, is asked
        once, first: a run Redis has forgotten; then Redis alone is watched).

        Raises:
            TimeoutError: no result within ``timeout`` seconds.
            tasks.archive.StoreError: the archive could not be read.
        """
        deadline = time.monotonic() + timeout
        with self.redis.pubsub(ignore_subscribe_messages=True) as pubsub:
            pubsub.subscribe(self.keys.results_channel)
            found = self.result(run_id)
            while found is None:
                if not _heard(pubsub, {run_id}, deadline):
                    raise reading.no_result([run_id], timeout)
                found = reading.result(self.redis.get(self.keys.result(run_id)))
            return found

    def results(self, group: str = "evalfleet-client", consumer: str = "consumer-1",
                block_ms: int = 5000, stop_when_idle: bool = False,
                claim_after_ms: int = 300_000) -> Iterator[RunResult]:
        """Every published result, through a consumer group: resumable, at least once.

        Results are acknowledged ten at a time, once the consumer asked for the one after
        them, so the results a consumer was handling when it stopped come again (up to ten)
        when it resumes under the same ``consumer`` name (give each process its own, stable
        name): its pending results come first, then results another consumer of the group
        left unacknowledged for ``claim_after_ms``, then new ones. The stream keeps an entry
        as long as its result (``EVALFLEET_RESULT_TTL_S``), so a group away for less than
        that misses nothing; a new group starts at the oldest result still kept. Results
        that expired before the group read them are skipped with a warning.
        """
        if not self._ensure_group(group):
            reading.missed_warning(group, missed_by(self.redis, group, self.keys.results_stream))
        while True:
            entries = (self._pending(group, consumer, claim_after_ms)
                       or self._new(group, consumer, block_ms))
            if not entries and stop_when_idle:
                return
            yield from self._handle(entries, group)

    def _pending(self, group: str, consumer: str, claim_after_ms: int) -> list[Any]:
        """This consumer's unacknowledged entries, else entries another consumer of the
        group left unacknowledged for ``claim_after_ms`` (claimed for this one)."""
        own = reading.entries(self.redis.xreadgroup(
            group, consumer, {self.keys.results_stream: "0"}, count=READ_COUNT))
        return own or reading.claimed(self.redis.xautoclaim(
            self.keys.results_stream, group, consumer, claim_after_ms, count=READ_COUNT))

    def _new(self, group: str, consumer: str, block_ms: int) -> list[Any]:
        return reading.entries(self.redis.xreadgroup(
            group, consumer, {self.keys.results_stream: ">"}, count=READ_COUNT, block=block_ms))

    def _handle(self, entries: list[Any], group: str) -> Iterator[RunResult]:
        """The results ``entries`` name, fetched ten at a time; each ten acknowledged with
        the fetch of the next (or at the end)."""
        handled: list[bytes] = []
        for start in range(0, len(entries), FETCH_CHUNK):
            chunk = entries[start:start + FETCH_CHUNK]
            bodies = self._fetch(chunk, group, handled)
            handled = []
            for (entry_id, fields), raw in zip(chunk, bodies, strict=True):
                found = reading.entry_result(fields, raw, group)
                if found is not None:
                    yield found
                handled.append(entry_id)
        if handled:
            self.redis.xack(self.keys.results_stream, group, *handled)

    def _fetch(self, chunk: list[Any], group: str, handled: list[bytes]) -> list[Any]:
        """One round trip: acknowledge ``handled``, read the result key of each entry."""
        with self.redis.pipeline(transaction=False) as pipe:
            if handled:
                pipe.xack(self.keys.results_stream, group, *handled)
            for _, fields in chunk:
                pipe.get(self.keys.result(reading.run_id(fields)))
            return reading.fetched(pipe.execute(), bool(handled))

    def _ensure_group(self, group: str) -> bool:
        """Create ``group`` at the start of the stream; whether it was created."""
        try:
            self.redis.xgroup_create(self.keys.results_stream, group, id="0", mkstream=True)
        except redis.ResponseError as err:
            return reading.created(err)
        return True

    def close(self) -> None:
        self.redis.close()


def _heard(pubsub: Any, run_ids: set[str], deadline: float) -> bool:
    """Wait for the publication of one of ``run_ids``, or a quiet second (then the caller
    reads again: other runs' publications cost it no ``GET``); False once ``deadline`` has
    passed."""
    while (left := deadline - time.monotonic()) > 0:
        if reading.announced(pubsub.get_message(timeout=min(left, 1.0)), run_ids):
            return True
    return False


__all__ = ["EvalfleetClient", "SubmitError", "ValidationError"]
