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
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Iterator
from typing import Any

import redis
from celery import Celery
from kombu.exceptions import BatchPublishError, OperationalError
from pydantic import ValidationError

from .. import broker
from ..lifecycle import Cancelled, Lifecycle
from ..messages import RunRequest, RunResult
from ..queueing import TASK_NAME, broker_priority, profile_of, queue_for, transport_options
from ..redis_keys import RESULTS_CHANNEL, RESULTS_STREAM, result_key, status_key
from ..status import RunStatus
from . import cancels
from .result_groups import missed_by

log = logging.getLogger(__name__)
#: Results fetched (and acknowledged) per round trip by :meth:`EvalfleetClient.results`.
FETCH_CHUNK = 10
#: Runs sent per pipelined round trip by :meth:`EvalfleetClient.submit_batch`.
SUBMIT_CHUNK = 500


class SubmitError(RuntimeError):
    """Redis did not take a submission (full, or unreachable): the runs named in
    ``not_enqueued`` were not queued and must be submitted again; those in ``enqueued`` (of
    the same batch, sent before the failure) were."""

    def __init__(self, enqueued: list[str], not_enqueued: list[str], cause: BaseException,
                 uncertain: list[str] | None = None):
        self.enqueued, self.not_enqueued = enqueued, not_enqueued
        self.uncertain = uncertain or []
        """Those of ``not_enqueued`` that were in the pipelined round trip that failed
        (:meth:`EvalfleetClient.submit_batch`): some may be queued; submitting them again
        is harmless, the fleet publishes one result per run id."""
        text = f"{cause} {cause.__cause__ or ''}"
        full = "maxmemory" in text or isinstance(cause, redis.OutOfMemoryError) \
            or isinstance(cause.__cause__, redis.OutOfMemoryError)
        why = ("Redis is full (maxmemory, noeviction): free memory or raise maxmemory"
               if full else "Redis could not be reached")
        super().__init__(
            f"{why}; not enqueued: {', '.join(not_enqueued)} (submit them again)"
            + (f"; of those perhaps enqueued: {', '.join(self.uncertain)}" if uncertain else "")
            + (f"; enqueued before the failure: {', '.join(enqueued)}" if enqueued else "")
            + f" [{type(cause).__name__}: {cause}]")


def sender_app(redis_url: str, visibility_timeout_s: int = 3600) -> Celery:
    """A Celery app that only sends ``evalfleet.run`` (same transport options as workers;
    evalfleet's broker channel, which rings a queue's doorbell with each run)."""
    broker.install()
    app = Celery("evalfleet-client", broker=redis_url, set_as_current=False)
    app.conf.broker_transport_options = transport_options(visibility_timeout_s)
    app.conf.broker_connection_retry_on_startup = True
    return app


class EvalfleetClient:
    """Submit runs to the fleet and read their results."""

    def __init__(self, redis_url: str, *, app: Celery | None = None,
                 status_ttl_s: int = 7 * 24 * 3600) -> None:
        self.redis: Any = redis.Redis.from_url(redis_url)
        self.app = app or sender_app(redis_url)
        self.lifecycle = Lifecycle(self.redis, status_ttl_s)
        """Writes the ``queued`` records, which live ``status_ttl_s`` until a worker takes
        the run (then as long as its result: ``EVALFLEET_RESULT_TTL_S``)."""

    def submit(self, request: RunRequest | dict[str, Any]) -> str:
        """Validate and enqueue one run; returns its run id.

        Raises:
            pydantic.ValidationError: the request is not a valid RunRequest.
            SubmitError: Redis did not take it (full or unreachable); it was not enqueued.
        """
        return self.submit_many([request])[0]

    def submit_many(self, requests: Iterable[RunRequest | dict[str, Any]]) -> list[str]:
        """Validate every request first, then enqueue them all over one connection.

        Raises:
            pydantic.ValidationError: a request is invalid (nothing is enqueued).
            SubmitError: Redis did not take a request (full or unreachable); it names the
                runs enqueued before that and those not enqueued.
        """
        checked = [r if isinstance(r, RunRequest) else RunRequest.model_validate(r)
                   for r in requests]
        sent: list[str] = []
        try:
            with self.app.producer_or_acquire() as producer:
                for request in checked:
                    self._send(request, producer)
                    sent.append(request.run_id)
        except (OperationalError, redis.RedisError) as err:
            self._record(checked[:len(sent)])
            raise SubmitError(sent, [r.run_id for r in checked[len(sent):]], err) from err
        self._record(checked)
        return sent

    def submit_batch(self, requests: Iterable[RunRequest | dict[str, Any]],
                     chunk: int = SUBMIT_CHUNK) -> list[str]:
        """:meth:`submit_many`, pipelined: ``chunk`` runs per round trip to Redis.

        Raises:
            pydantic.ValidationError: a request is invalid (nothing is enqueued).
            SubmitError: a round trip failed: the runs of earlier round trips are
                ``enqueued``; that round trip's runs are ``uncertain`` (some may be queued)
                and, with every later run, ``not_enqueued``.
        """
        checked = [r if isinstance(r, RunRequest) else RunRequest.model_validate(r)
                   for r in requests]
        sent: list[str] = []
        with self.app.producer_or_acquire() as producer:
            for start in range(0, len(checked), chunk):
                part = checked[start:start + chunk]
                try:
                    with producer.batch(max_size=len(part) + 1):
                        for request in part:
                            self._send(request, producer)
                except (BatchPublishError, OperationalError, redis.RedisError) as err:
                    raise SubmitError(sent, [r.run_id for r in checked[len(sent):]], err,
                                      uncertain=[r.run_id for r in part]) from err
                sent.extend(r.run_id for r in part)
                self._record(part)
        return sent

    def _record(self, requests: list[RunRequest]) -> None:
        """The ``queued`` record of each run sent, in one round trip, after it was sent (a
        worker that took it first wrote ``running``, which the record leaves alone). A
        Redis that refuses it loses only the record: the run was queued, and its worker
        writes the record when it starts it."""
        try:
            with self.redis.pipeline(transaction=False) as pipe:
                for request in requests:
                    self.lifecycle.queue(request.run_id, request.match,
                                         _seconds(request.expires_at), client=pipe)
                pipe.execute()
        except redis.RedisError as err:
            log.warning("submit: the queued records of %d runs were not written: %s",
                        len(requests), err)

    def _send(self, request: RunRequest, producer: Any) -> None:
        # argsrepr: the run id, not Celery's repr of the whole request (which it computes
        # on every send and stores in every queued message)
        self.app.send_task(
            TASK_NAME, args=[request.model_dump_json(exclude_none=True)],
            kwargs={"enqueued_at": time.time()}, queue=queue_for(profile_of(request.pack)),
            priority=broker_priority(request.priority), producer=producer,
            argsrepr=f"[run {request.run_id}]")

    def result(self, run_id: str) -> RunResult | None:
        """The published result of ``run_id``, or None if there is none (yet)."""
        raw = self.redis.get(result_key(run_id))
        return RunResult.model_validate_json(raw) if raw is not None else None

    def status(self, run_id: str) -> RunStatus | None:
        """Where ``run_id`` stands: ``queued``, ``running`` (which worker, which attempt) or
        how it ended, with the time of each transition; ``None`` for a run the fleet does
        not know (never submitted, or past its result's TTL)."""
        return RunStatus.from_record(run_id, self.redis.hgetall(status_key(run_id)))

    def cancel(self, run_id: str) -> Cancelled:
        """Cancel a run: a queued run never starts; a running run's sandbox is stopped; its
        one result is ``cancelled`` (no scorecard). A finished run is left as it is:
        ``what`` says ``finished`` (``was``: how it ended), or ``unknown``."""
        return cancels.cancel(self.lifecycle, run_id)

    def cancel_match(self, match: str) -> list[Cancelled]:
        """:meth:`cancel` every run of ``match``; one answer each."""
        return cancels.cancel_match(self.lifecycle, match)

    def runs(self, match: str) -> list[RunStatus]:
        """The runs of ``match`` with their statuses, in the order they were submitted."""
        run_ids = cancels.match_runs(self.redis, match)
        with self.redis.pipeline(transaction=False) as pipe:
            for run_id in run_ids:
                pipe.hgetall(status_key(run_id))
            records = pipe.execute()
        found = (RunStatus.from_record(r, record) for r, record in zip(run_ids, records,
                                                                        strict=True))
        return [status for status in found if status is not None]

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
            pubsub.subscribe(RESULTS_CHANNEL)
            while waiting:
                for found in self._published(waiting):
                    waiting.discard(found.run_id)
                    yield found
                if waiting and not _heard_any(pubsub, waiting, deadline):
                    raise TimeoutError(f"no result within {timeout} s for "
                                       f"{', '.join(sorted(waiting))}")

    def _published(self, run_ids: set[str]) -> list[RunResult]:
        """The results of ``run_ids`` published so far (one round trip)."""
        ordered = sorted(run_ids)
        raws = self.redis.mget([result_key(run_id) for run_id in ordered])
        return [RunResult.model_validate_json(raw) for raw in raws if raw is not None]

    def wait(self, run_id: str, timeout: float = 300.0) -> RunResult:
        """Block until ``run_id``'s result is published.

        Raises:
            TimeoutError: no result within ``timeout`` seconds.
        """
        deadline = time.monotonic() + timeout
        with self.redis.pubsub(ignore_subscribe_messages=True) as pubsub:
            pubsub.subscribe(RESULTS_CHANNEL)
            while (found := self.result(run_id)) is None:
                if not _heard(pubsub, run_id.encode(), deadline):
                    raise TimeoutError(f"no result for run {run_id!r} within {timeout} s")
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
            self._warn_if_missed(group)
        while True:
            entries = (self._pending(group, consumer, claim_after_ms)
                       or self._new(group, consumer, block_ms))
            if not entries and stop_when_idle:
                return
            yield from self._handle(entries, group)

    def _pending(self, group: str, consumer: str, claim_after_ms: int) -> list[Any]:
        """This consumer's unacknowledged entries, else entries another consumer of the
        group left unacknowledged for ``claim_after_ms`` (claimed for this one)."""
        own = self.redis.xreadgroup(group, consumer, {RESULTS_STREAM: "0"}, count=100)
        entries = [e for _, stream_entries in own or [] for e in stream_entries]
        if entries:
            return entries
        _, claimed, *_ = self.redis.xautoclaim(RESULTS_STREAM, group, consumer, claim_after_ms,
                                               count=100)
        return list(claimed)

    def _new(self, group: str, consumer: str, block_ms: int) -> list[Any]:
        batch = self.redis.xreadgroup(group, consumer, {RESULTS_STREAM: ">"}, count=100,
                                      block=block_ms)
        return [e for _, stream_entries in batch or [] for e in stream_entries]

    def _handle(self, entries: list[Any], group: str) -> Iterator[RunResult]:
        """The results ``entries`` name, fetched ten at a time; each ten acknowledged with
        the fetch of the next (or at the end)."""
        handled: list[bytes] = []
        for start in range(0, len(entries), FETCH_CHUNK):
            chunk = entries[start:start + FETCH_CHUNK]
            bodies = self._fetch(chunk, group, handled)
            handled = []
            for (entry_id, fields), raw in zip(chunk, bodies, strict=True):
                found = self._parsed(fields, raw, group)
                if found is not None:
                    yield found
                handled.append(entry_id)
        if handled:
            self.redis.xack(RESULTS_STREAM, group, *handled)

    def _fetch(self, chunk: list[Any], group: str, handled: list[bytes]) -> list[Any]:
        """One round trip: acknowledge ``handled``, read the result key of each entry."""
        with self.redis.pipeline(transaction=False) as pipe:
            if handled:
                pipe.xack(RESULTS_STREAM, group, *handled)
            for _, fields in chunk:
                pipe.get(result_key(_run_id(fields)))
            replies = pipe.execute()
        return list(replies[1:] if handled else replies)

    def _parsed(self, fields: dict[bytes, bytes] | None, raw: bytes | None,
                group: str) -> RunResult | None:
        if raw is None:  # the result expired, or the entry was trimmed while pending
            log.warning("results: group %s skips %s: its result expired before it was read",
                        group, _run_id(fields) or "a trimmed entry")
            return None
        return RunResult.model_validate_json(raw)

    def _ensure_group(self, group: str) -> bool:
        """Create ``group`` at the start of the stream; whether it was created."""
        try:
            self.redis.xgroup_create(RESULTS_STREAM, group, id="0", mkstream=True)
        except redis.ResponseError as err:
            if "BUSYGROUP" not in str(err):
                raise
            return False
        return True

    def _warn_if_missed(self, group: str) -> None:
        """Log how many results the stream dropped before ``group`` read them (a group
        away for longer than the results' TTL)."""
        missed = missed_by(self.redis, group)
        if missed:
            log.warning("results: group %s was away too long: %d results expired before it "
                        "read them", group, missed)

    def close(self) -> None:
        self.redis.close()


def _run_id(fields: dict[bytes, bytes] | None) -> str:
    return (fields or {}).get(b"run_id", b"").decode()


def _heard_any(pubsub: Any, run_ids: set[str], deadline: float) -> bool:
    """Wait for the publication of one of ``run_ids``, or a quiet second; False once
    ``deadline`` has passed."""
    while (left := deadline - time.monotonic()) > 0:
        message = pubsub.get_message(timeout=min(left, 1.0))
        if message is None or message["data"].decode(errors="replace") in run_ids:
            return True
    return False


def _seconds(moment: Any) -> float | None:
    return None if moment is None else float(moment.timestamp())


def _heard(pubsub: Any, run_id: bytes, deadline: float) -> bool:
    """Wait for ``run_id``'s publication, or a quiet second (then the caller reads again:
    other runs' publications cost it no ``GET``); False once ``deadline`` has passed."""
    while (left := deadline - time.monotonic()) > 0:
        message = pubsub.get_message(timeout=min(left, 1.0))
        if message is None or message["data"] == run_id:
            return True
    return False


__all__ = ["EvalfleetClient", "SubmitError", "ValidationError", "sender_app"]

