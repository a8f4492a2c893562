"""The client a platform uses: submit runs, then read their results back from Redis.

    client = EvalfleetClient("redis://localhost:6379/0")
    run_id = client.submit({"run_id": "r1", "pack_ref": "fizzbuzz", "submission": {...}})
    result = client.wait(run_id, timeout=60)          # a RunResult
    for result in client.results(group="leaderboard"):  # every result, resumable
        ...
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from typing import Any

import redis
from celery import Celery
from pydantic import ValidationError

from .messages import RunRequest, RunResult
from .publish import RESULTS_CHANNEL, RESULTS_STREAM, result_key
from .queueing import TASK_NAME, broker_priority, profile_of, queue_for, transport_options


def sender_app(redis_url: str, visibility_timeout_s: int = 3600) -> Celery:
    """A Celery app that only sends ``evalfleet.run`` (same transport options as workers)."""
    app = Celery("evalfleet-client", broker=redis_url, set_as_current=False)
    app.conf.broker_transport_options = transport_options(visibility_timeout_s)
    app.conf.broker_connection_retry_on_startup = True
    return app


class EvalfleetClient:
    """Submit runs to the fleet and read their results."""

    def __init__(self, redis_url: str, *, app: Celery | None = None) -> None:
        self.redis: Any = redis.Redis.from_url(redis_url)
        self.app = app or sender_app(redis_url)

    def submit(self, request: RunRequest | dict[str, Any]) -> str:
        """Validate and enqueue one run; returns its run id.

        Raises:
            pydantic.ValidationError: the request is not a valid RunRequest.
        """
        return self.submit_many([request])[0]

    def submit_many(self, requests: Iterable[RunRequest | dict[str, Any]]) -> list[str]:
        """Validate every request first, then enqueue them all over one connection.

        Raises:
            pydantic.ValidationError: a request is invalid (nothing is enqueued).
        """
        checked = [r if isinstance(r, RunRequest) else RunRequest.model_validate(r)
                   for r in requests]
        with self.app.producer_or_acquire() as producer:
            for request in checked:
                self._send(request, producer)
        return [r.run_id for r in checked]

    def _send(self, request: RunRequest, producer: Any) -> None:
        self.app.send_task(
            TASK_NAME, args=[request.model_dump_json(exclude_none=True)],
            kwargs={"enqueued_at": time.time()}, queue=queue_for(profile_of(request.pack)),
            priority=broker_priority(request.priority), producer=producer)

    def result(self, run_id: str) -> RunResult | None:
        """The published result of ``run_id``, or None if there is none (yet)."""
        raw = self.redis.get(result_key(run_id))
        return RunResult.model_validate_json(raw) if raw is not None else None

    def wait(self, run_id: str, timeout: float = 300.0) -> RunResult:
        """Block until ``run_id``'s result is published.

        Raises:
            TimeoutError: no result within ``timeout`` seconds.
        """
        deadline = time.monotonic() + timeout
        with self.redis.pubsub(ignore_subscribe_messages=True) as pubsub:
            pubsub.subscribe(RESULTS_CHANNEL)
            while True:
                found = self.result(run_id)
                if found is not None:
                    return found
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"no result for run {run_id!r} within {timeout} s")
                pubsub.get_message(timeout=min(left, 1.0))

    def results(self, group: str = "evalfleet-client", consumer: str = "consumer-1",
                block_ms: int = 5000, stop_when_idle: bool = False) -> Iterator[RunResult]:
        """Every published result, through a consumer group (resumable: acked as yielded)."""
        self._ensure_group(group)
        while True:
            batch = self.redis.xreadgroup(group, consumer, {RESULTS_STREAM: ">"}, count=100,
                                          block=block_ms)
            entries = [e for _, stream_entries in batch or [] for e in stream_entries]
            if not entries and stop_when_idle:
                return
            for entry_id, fields in entries:
                yield RunResult.model_validate_json(fields[b"result"])
                self.redis.xack(RESULTS_STREAM, group, entry_id)

    def _ensure_group(self, group: str) -> None:
        try:
            self.redis.xgroup_create(RESULTS_STREAM, group, id="0", mkstream=True)
        except redis.ResponseError as err:
            if "BUSYGROUP" not in str(err):
                raise

    def close(self) -> None:
        self.redis.close()


__all__ = ["EvalfleetClient", "ValidationError", "sender_app"]
