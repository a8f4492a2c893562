"""The client for asyncio: :class:`~.client.EvalfleetClient`'s verbs, awaited.

    async with AsyncEvalfleetClient("redis://localhost:6379/0") as client:
        await client.submit_batch(requests)               # pipelined, into the intake
        result = await client.wait(run_id, timeout=60)
        async for result in client.wait_many("match-7"):  # a match's results as they come
            ...
        async for result in client.results(group="leaderboard"):  # every result, resumable
            ...

What to send and what the replies mean is shared with the synchronous client
(:mod:`.submission`, :mod:`.reading`, :mod:`.cancels`, the scripts of
:mod:`tasks.lifecycle`); only the waiting on Redis differs.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator, AsyncIterator, Iterable
from contextlib import aclosing
from types import TracebackType
from typing import Any

import redis
import redis.asyncio

from ..archive import Archive
from ..lifecycle import Cancelled, cancellation
from ..messages import RunRequest, RunResult
from ..redis_connection import connect_async
from ..status import RunStatus
from ..tenancy import keys_of
from . import cancels, reading, submission
from .reading import FETCH_CHUNK, READ_COUNT
from .submission import SUBMIT_CHUNK


class AsyncEvalfleetClient:
    """Submit runs to the fleet and read their results, with ``redis.asyncio``."""

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
        self.redis: Any = connect_async(redis_url)
        self.keys = keys_of(self.redis, tenant)
        """Where its runs live (:class:`~tasks.redis_keys.Keyspace`)."""
        self.status_ttl_s = status_ttl_s
        """How long a ``queued`` record lives until a worker takes the run."""
        self.seal = seal
        """How the cancels this client publishes are written (:class:`.client.EvalfleetClient`)."""
        self.archive = Archive.at(archive_url) if archive_url else None
        """Where runs are found once Redis has forgotten them (read in a thread)."""

    async def __aenter__(self) -> AsyncEvalfleetClient:
        return self

    async def __aexit__(self, kind: type[BaseException] | None, error: BaseException | None,
                        trace: TracebackType | None) -> None:
        await self.close()

    async def submit(self, request: RunRequest | dict[str, Any]) -> str:
        """:meth:`EvalfleetClient.submit <.client.EvalfleetClient.submit>`."""
        return (await self.submit_batch([request]))[0]

    async def submit_many(self, requests: Iterable[RunRequest | dict[str, Any]]) -> list[str]:
        """:meth:`submit_batch`."""
        return await self.submit_batch(requests)

    async def submit_batch(self, requests: Iterable[RunRequest | dict[str, Any]],
                           chunk: int = SUBMIT_CHUNK) -> list[str]:
        """Validate every request, then add them to the intake stream, ``chunk`` per
        pipelined round trip; returns their run ids.

        Raises:
            pydantic.ValidationError: a request is invalid (nothing is enqueued).
            SubmitError: as :meth:`EvalfleetClient.submit_batch
                <.client.EvalfleetClient.submit_batch>`.
        """
        checked = submission.checked(requests)
        sent: list[str] = []
        for part in submission.chunks(checked, chunk):
            try:
                async with self.redis.pipeline(transaction=False) as pipe:
                    for call in submission.calls(part, self.status_ttl_s, self.keys):
                        call.on(pipe)
                    replies = await pipe.execute(raise_on_error=False)
            except redis.RedisError as err:
                raise submission.lost(sent, part, checked, err) from err
            sent = submission.settle(sent, part, replies, checked)
        return sent

    async def result(self, run_id: str) -> RunResult | None:
        """The published result of ``run_id`` (from the archive once Redis forgot it), or
        None if there is none (yet).

        Raises:
            tasks.archive.StoreError: Redis has none and the archive could not be read.
        """
        found = reading.result(await self.redis.get(self.keys.result(run_id)))
        if found is None and self.archive is not None:
            return await asyncio.to_thread(self.archive.result, run_id)
        return found

    async def status(self, run_id: str) -> RunStatus | None:
        """Where ``run_id`` stands (:meth:`EvalfleetClient.status
        <.client.EvalfleetClient.status>`); None for a run the fleet does not know.

        Raises:
            tasks.archive.StoreError: Redis has none and the archive could not be read.
        """
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.hgetall(self.keys.status(run_id))
            pipe.get(self.keys.held)
            record, held = await pipe.execute()
        found = RunStatus.from_record(run_id, record, held)
        if found is None and self.archive is not None:
            return await asyncio.to_thread(self.archive.status, run_id)
        return found

    async def cancel(self, run_id: str) -> Cancelled:
        """Cancel a run (:meth:`EvalfleetClient.cancel <.client.EvalfleetClient.cancel>`)."""
        publication, body = cancels.cancelled(run_id, await self.redis.hget(
            self.keys.status(run_id), "match"), self.seal)
        reply = await cancellation(publication, body, self.status_ttl_s, self.keys).on(self.redis)
        return Cancelled.of(run_id, reply)

    async def cancel_match(self, match: str) -> list[Cancelled]:
        """:meth:`cancel` every run of ``match``; one answer each."""
        return [await self.cancel(run_id) for run_id in await self._match_runs(match)]

    async def runs(self, match: str) -> list[RunStatus]:
        """The runs of ``match`` with their statuses, in the order they were submitted;
        with an archive, its runs of the match that Redis has forgotten too (first).

        Raises:
            tasks.archive.StoreError: the archive could not be listed or read.
        """
        run_ids = await self._match_runs(match)
        async with self.redis.pipeline(transaction=False) as pipe:
            for run_id in run_ids:
                pipe.hgetall(self.keys.status(run_id))
            known = reading.statuses(run_ids, await pipe.execute())
        if self.archive is None:
            return known
        forgotten = await asyncio.to_thread(reading.archived_runs, self.archive, match,
                                            {s.run_id for s in known})
        return [*forgotten, *known]

    async def _match_runs(self, match: str) -> list[str]:
        return cancels.texts(await self.redis.zrange(self.keys.match(match), 0, -1))

    async def wait(self, run_id: str, timeout: float = 300.0) -> RunResult:
        """Wait until ``run_id``'s result is published (the archive, if any, is asked
        once, first: a run Redis has forgotten).

        Raises:
            TimeoutError: no result within ``timeout`` seconds.
            tasks.archive.StoreError: the archive could not be read.
        """
        if self.archive is not None and (found := await self.result(run_id)) is not None:
            return found
        async with aclosing(self.wait_many([run_id], timeout)) as waiting:
            return await anext(waiting)

    async def wait_many(self, runs: str | Iterable[str],
                        timeout: float = 300.0) -> AsyncGenerator[RunResult, None]:
        """The results of ``runs`` (run ids, or a match's name) as they are published.

        Raises:
            TimeoutError: ``timeout`` seconds passed with results missing (named).
        """
        waiting = (set(await self._match_runs(runs)) if isinstance(runs, str) else set(runs))
        deadline = time.monotonic() + timeout
        async with self.redis.pubsub(ignore_subscribe_messages=True) as pubsub:
            await pubsub.subscribe(self.keys.results_channel)
            while waiting:
                ordered = sorted(waiting)
                raws = await self.redis.mget([self.keys.result(r) for r in ordered])
                for found in reading.published(raws):
                    waiting.discard(found.run_id)
                    yield found
                if waiting and not await _heard(pubsub, waiting, deadline):
                    raise reading.no_result(waiting, timeout)

    async def results(self, group: str = "evalfleet-client", consumer: str = "consumer-1",
                      block_ms: int = 5000, stop_when_idle: bool = False,
                      claim_after_ms: int = 300_000) -> AsyncGenerator[RunResult, None]:
        """Every published result, through a consumer group: resumable, at least once (as
        :meth:`EvalfleetClient.results <.client.EvalfleetClient.results>`, which also warns
        of results that expired before a returning group read them)."""
        await self._ensure_group(group)
        while True:
            entries = (await self._pending(group, consumer, claim_after_ms)
                       or await self._new(group, consumer, block_ms))
            if not entries and stop_when_idle:
                return
            async for found in self._handle(entries, group):
                yield found

    async def _pending(self, group: str, consumer: str, claim_after_ms: int) -> list[Any]:
        own = reading.entries(await self.redis.xreadgroup(
            group, consumer, {self.keys.results_stream: "0"}, count=READ_COUNT))
        return own or reading.claimed(await self.redis.xautoclaim(
            self.keys.results_stream, group, consumer, claim_after_ms, count=READ_COUNT))

    async def _new(self, group: str, consumer: str, block_ms: int) -> list[Any]:
        return reading.entries(await self.redis.xreadgroup(
            group, consumer, {self.keys.results_stream: ">"}, count=READ_COUNT, block=block_ms))

    async def _handle(self, entries: list[Any], group: str) -> AsyncIterator[RunResult]:
        """The results ``entries`` name, ten per round trip, each ten acknowledged with the
        fetch of the next (or at the end)."""
        handled: list[bytes] = []
        for start in range(0, len(entries), FETCH_CHUNK):
            chunk = entries[start:start + FETCH_CHUNK]
            async with self.redis.pipeline(transaction=False) as pipe:
                if handled:
                    pipe.xack(self.keys.results_stream, group, *handled)
                for _, fields in chunk:
                    pipe.get(self.keys.result(reading.run_id(fields)))
                bodies = reading.fetched(await pipe.execute(), bool(handled))
            handled = [entry_id for entry_id, _ in chunk]
            for (_, fields), raw in zip(chunk, bodies, strict=True):
                if (found := reading.entry_result(fields, raw, group)) is not None:
                    yield found
        if handled:
            await self.redis.xack(self.keys.results_stream, group, *handled)

    async def _ensure_group(self, group: str) -> bool:
        try:
            await self.redis.xgroup_create(self.keys.results_stream, group, id="0", mkstream=True)
        except redis.ResponseError as err:
            return reading.created(err)
        return True

    async def close(self) -> None:
        await self.redis.aclose()


async def _heard(pubsub: Any, run_ids: set[str], deadline: float) -> bool:
    """As the synchronous client's: a publication of one of ``run_ids``, or a quiet
    second; False once ``deadline`` has passed."""
    while (left := deadline - time.monotonic()) > 0:
        message = await pubsub.get_message(ignore_subscribe_messages=True,
                                           timeout=min(left, 1.0))
        if reading.announced(message, run_ids):
            return True
    return False
