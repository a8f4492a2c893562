"""The Celery task ``evalfleet.run``: a thin adapter around the pipeline.

Delivery policy (who is at fault decides the path):

* a rejected request or a scored run is published and acked — never retried;
* ``SandboxUnavailable`` / a Redis connection error (infrastructure) is retried with
  backoff; past the delivery cap it is published as ``infra_error``;
* ``SandboxConfigError`` (image missing, bad profile) is published as ``infra_error`` at once;
* any other exception (a bug of ours) is retried up to the cap, then published as
  ``internal_error``.

Every delivery is counted in ``evalfleet:deliveries:<run_id>`` (a worker killed mid-run
redelivers without any retry call), so a poison message stops after the cap.
"""

from __future__ import annotations

import time
from typing import Any

from celery import shared_task
from celery.exceptions import Reject
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from sandbox.errors import SandboxConfigError, SandboxUnavailable

from . import runtime
from .closing import close_now
from .messages import RunResult, cap_size, decode_loosely, fallback_run_id
from .pipeline import run_pipeline
from .provenance import provenance
from .publish import Publisher
from .queueing import TASK_NAME

DELIVERIES = "evalfleet:deliveries:{run_id}"
INFRA_ERRORS = (SandboxUnavailable, RedisConnectionError, RedisTimeoutError, ConnectionError)


@shared_task(name=TASK_NAME, bind=True, acks_late=True, reject_on_worker_lost=True,
             ignore_result=True, max_retries=None)
def run(self: Any, request: str | dict[str, Any], enqueued_at: float | None = None) -> str:
    """Evaluate one run request and publish its result; returns the outcome."""
    return execute(runtime.current(), self, request, enqueued_at)


def execute(rt: runtime.Runtime, task: Any, body: Any, enqueued_at: float | None) -> str:
    """The task body, with the runtime passed in (testable without a worker)."""
    run_id = fallback_run_id(decode_loosely(body))
    if rt.publisher.published(run_id):
        rt.observer.duplicate()
        return "duplicate"
    attempt = _count_delivery(rt, run_id)
    if attempt > rt.delivery_cap:
        # Only deliveries that never returned get here (every failure that returns is capped
        # on its way out): the pool process was lost mid-run each time (SIGKILL, OOM kill, a
        # crash in native code) and task_reject_on_worker_lost requeued it. A poison message
        # must not loop forever, so it is published as failed without running again.
        reason = (f"gave up after {attempt - 1} deliveries that never finished (the worker "
                  "process was lost during each, or the run outlived the visibility timeout)")
        return _publish(rt, failed(run_id, "internal_error", reason, rt), attempt,
                        enqueued_at, _queue(task))
    try:
        result = run_pipeline(body, rt.factory, rt.config,
                              close=rt.closer.close_later if rt.closer else close_now)
    except SandboxConfigError as err:
        result = failed(run_id, "infra_error", f"sandbox configuration: {err}", rt)
    except INFRA_ERRORS as err:
        result = _retry_or_give_up(rt, task, run_id, attempt, "infra_error", err)
    except Exception as err:  # a bug of ours: retried, then published
        result = _retry_or_give_up(rt, task, run_id, attempt, "internal_error", err)
    return _publish(rt, result, attempt, enqueued_at, _queue(task))


def _count_delivery(rt: runtime.Runtime, run_id: str) -> int:
    key = DELIVERIES.format(run_id=run_id)
    attempt = int(rt.redis.incr(key))
    rt.redis.expire(key, rt.delivery_ttl_s)
    if attempt > 1:
        rt.observer.redelivered()
    return attempt


def _retry_or_give_up(rt: runtime.Runtime, task: Any, run_id: str, attempt: int,
                      outcome: Any, err: BaseException) -> RunResult:
    reason = f"{type(err).__name__}: {err}"
    if attempt >= rt.delivery_cap:
        return failed(run_id, outcome, f"gave up after {attempt} deliveries: {reason}", rt)
    try:
        raise task.retry(exc=err, countdown=rt.retry_backoff_s * 2 ** (attempt - 1))
    except Reject as unsent:
        # Celery turns a retry it cannot send (broker unreachable or refusing writes, e.g. at
        # maxmemory) into Reject(requeue=False): with acks_late that deletes the run, and no
        # result is ever published. Requeue it instead; the delivery cap still bounds it.
        raise Reject(unsent.reason, requeue=True) from err


def failed(run_id: str, outcome: Any, reason: str, rt: runtime.Runtime) -> RunResult:
    """A run that ends without a scorecard (never the candidate's fault)."""
    return RunResult(run_id=run_id, outcome=outcome, reason=reason, worker=rt.config.worker_id,
                     provenance=provenance())


def _publish(rt: runtime.Runtime, result: RunResult, attempt: int, enqueued_at: float | None,
             queue: str) -> str:
    result.attempt = attempt
    if enqueued_at is not None:
        total = result.timings_ms.get("total", 0.0)
        waited = (time.time() - enqueued_at) * 1000 - total
        result.timings_ms["queue_wait"] = round(max(0.0, waited), 3)
    started = time.perf_counter()
    body = cap_size(result, rt.config.max_result_bytes).to_json()
    first = publish_once(rt.publisher, result.run_id, body)
    result.timings_ms["publish"] = round((time.perf_counter() - started) * 1000, 3)
    if first:
        rt.observer.run_finished(result, queue)
    else:
        rt.observer.duplicate()
    stats = getattr(rt.factory, "stats", None)
    if callable(stats):
        rt.observer.pool(stats())
    return result.outcome if first else "duplicate"


def publish_once(publisher: Publisher, run_id: str, body: str) -> bool:
    """Publish; False for a duplicate."""
    return publisher.publish(run_id, body)


def _queue(task: Any) -> str:
    info = getattr(getattr(task, "request", None), "delivery_info", None) or {}
    return str(info.get("routing_key") or "unknown")
