"""Submission: the slim client's ``submit_batch`` (into the intake stream, pipelined, each
run's ``queued`` record in the same script) against, in the same process and on the same
Redis, interleaved:

* the Celery send path the client used before (``send_task`` in kombu batches of 500 through
  evalfleet's broker channel, then the ``queued`` records in one round trip each): what a
  platform got before, and what the forwarders now do for it;
* a bare pipelined ``XADD`` of each request's JSON (no validation, no record): the floor.

Then the intake's forwarder: one :class:`~tasks.platform.intake.IntakeForwarder` moving a
backlog of the client's entries into the Celery queues, against the client's own rate (a
fleet keeps up when its forwarders together match it). Needs ``redis-server`` only.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.common import Report, Row
from evalfleet.tasks.lifecycle import Lifecycle
from evalfleet.tasks.messages import RunRequest
from evalfleet.tasks.platform import EvalfleetClient
from evalfleet.tasks.platform.intake import IntakeForwarder, sender_app
from evalfleet.tasks.queueing import TASK_NAME, broker_priority, profile_of, queue_for
from evalfleet.tasks.redis_keys import INTAKE_STREAM
from evalfleet.workers.devtools import sandbox_free
from evalfleet.workers.devtools.local_fleet import RedisServer, free_port

CHUNK = 500


def celery_batch(app: Any, lifecycle: Lifecycle, requests: list[dict[str, Any]]) -> None:
    """The client's submission before the intake: validate, send in kombu batches, record."""
    checked = [RunRequest.model_validate(r) for r in requests]
    with app.producer_or_acquire() as producer:
        for start in range(0, len(checked), CHUNK):
            part = checked[start:start + CHUNK]
            with producer.batch(max_size=len(part) + 1):
                for request in part:
                    app.send_task(TASK_NAME, args=[request.model_dump_json(exclude_none=True)],
                                  kwargs={"enqueued_at": time.time()},
                                  queue=queue_for(profile_of(request.pack)),
                                  priority=broker_priority(request.priority),
                                  producer=producer, argsrepr=f"[run {request.run_id}]")
            with lifecycle.redis.pipeline(transaction=False) as pipe:
                for request in part:
                    lifecycle.queue(request.run_id, request.match, None, client=pipe)
                pipe.execute()


def bare_xadd(client: Any, requests: list[dict[str, Any]]) -> None:
    """Pipelined ``XADD`` of each request as it is (``json`` of the dict), 500 per trip."""
    import json

    for start in range(0, len(requests), CHUNK):
        with client.pipeline(transaction=False) as pipe:
            for request in requests[start:start + CHUNK]:
                pipe.xadd(INTAKE_STREAM, {"request": json.dumps(request)})
            pipe.execute()


def empty(client: Any) -> None:
    """Leave Redis as it was: no entry waiting, no queued run."""
    client.xtrim(INTAKE_STREAM, maxlen=0)
    for key in client.keys("evalfleet.default*"):
        client.delete(key)


def rate(send: Callable[[list[dict[str, Any]]], object], count: int, client: Any) -> float:
    requests = [sandbox_free.request("submit") for _ in range(count)]
    started = time.perf_counter()
    send(requests)
    found = count / (time.perf_counter() - started)
    empty(client)
    return found


def forwarding(client: EvalfleetClient, forwarder: IntakeForwarder, count: int) -> float:
    """Entries/s one forwarder moves from a backlog of ``count`` into the queues."""
    client.submit_batch([sandbox_free.request("fwd") for _ in range(count)])
    started = time.perf_counter()
    moved = 0
    while moved < count:
        moved += forwarder.forward_once(block_ms=10)
    found = count / (time.perf_counter() - started)
    empty(client.redis)
    return found


def run(report: Report, count: int = 10_000, rounds: int = 3) -> None:
    """Median of ``rounds`` interleaved rounds of each path; then the forwarder."""
    with tempfile.TemporaryDirectory(prefix="evalfleet-submission-") as tmp:
        redis = RedisServer(free_port(), Path(tmp)).start()
        client = EvalfleetClient(redis.url)
        app = sender_app(redis.url)
        forwarder = IntakeForwarder(client.redis, app, consumer="bench")
        forwarder.ensure_group()
        try:
            paths: dict[str, Callable[[list[dict[str, Any]]], object]] = {
                "intake": client.submit_batch,
                "celery": lambda r: celery_batch(app, client.lifecycle, r),
                "xadd": lambda r: bare_xadd(client.redis, r)}
            rates: dict[str, list[float]] = {name: [] for name in paths}
            for _ in range(rounds):
                for name, send in paths.items():
                    rates[name].append(rate(send, count, client.redis))
            moved = statistics.median(forwarding(client, forwarder, count)
                                      for _ in range(rounds))
        finally:
            client.close()
            redis.stop()
    _report(report, {name: statistics.median(found) for name, found in rates.items()}, moved)


def _report(report: Report, rates: dict[str, float], moved: float) -> None:
    ours = rates["intake"]
    target = Row("slim client submission (`submit_batch`, intake) vs the target", ours, 2000,
                 "runs/s", "≥ 1.0", False)
    target.met = target.ratio >= 1.0
    report.add(target)
    report.add(Row("slim client submission vs the Celery send path (the old client)", ours,
                   rates["celery"], "runs/s", "", False))
    report.add(Row("slim client submission vs a bare pipelined XADD (no validation, no "
                   "record)", ours, rates["xadd"], "runs/s", "", False))
    keeps = Row("one intake forwarder, backlog into the queues, vs the client's rate", moved,
                ours, "runs/s", "", False)
    report.add(keeps)
