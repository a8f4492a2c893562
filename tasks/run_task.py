"""The Celery task ``evalfleet.run``: a thin adapter around the pipeline.

Delivery policy (who is at fault decides the path):

* a rejected request or a scored run is published and acked — never retried;
* ``SandboxUnavailable`` / a Redis connection error (infrastructure) is retried with
  backoff; past the delivery cap it is published as ``infra_error``;
* ``SandboxConfigError`` (image missing, bad profile) is published as ``infra_error`` at once;
* any other exception (a bug of ours) is retried up to the cap, then published as
  ``internal_error``.

* a run whose ``expires_at`` passed before its admission never starts: published as
  ``expired``;
* a run the platform cancels is stopped where it is (its sandbox ended:
  :mod:`tasks.cancelling`) and its worker publishes nothing: the cancel published its one
  result (:mod:`tasks.lifecycle`).

Every delivery is counted in ``evalfleet:deliveries:<run_id>`` (a worker killed mid-run
redelivers without any retry call), so a poison message stops after the cap; the count and
the check for a result published already are one round trip (``Publisher.admit``).

The Redis steps a run cannot do without (the admission, sending a retry, the publication)
wait while Redis refuses them — full, loading, unreachable — and go on as soon as it takes
them (:mod:`tasks.patience`); the run is never failed, and so never acknowledged, for that.
Only when Celery's soft time limit comes near does the task give the run back
(``Reject(requeue=True)``).
"""

from __future__ import annotations

import logging
import time
from typing import Any

from celery import shared_task
from celery.exceptions import Reject
from kombu.exceptions import OperationalError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from evalfleet.sandbox.errors import SandboxConfigError, SandboxUnavailable

from . import task_context
from .cancelling import CancelWatch, RunCancelled, WatchedFactory
from .decoding import Life, decode_loosely, fallback_run_id, life_of, parse_request
from .evaluation.closing import close_now
from .evaluation.pipeline import rejected, run_pipeline
from .evaluation.provenance import provenance
from .evaluation.rating import expired_rating
from .messages import Rejection, RunResult
from .patience import Refused
from .queueing import TASK_NAME
from .redis_keys import Keyspace, keyspace

log = logging.getLogger(__name__)
INFRA_ERRORS = (SandboxUnavailable, RedisConnectionError, RedisTimeoutError, ConnectionError)
#: Seconds before Celery's soft time limit at which a run stops waiting for Redis.
DEADLINE_MARGIN_S = 10.0


@shared_task(name=TASK_NAME, bind=True, acks_late=True, reject_on_worker_lost=True,
             ignore_result=True, max_retries=None)
def run(self: Any, request: str | dict[str, Any], enqueued_at: float | None = None,
        tenant: str | None = None) -> str:
    """Evaluate one run request and publish its result; returns the outcome. ``tenant``:
    whose intake the request came from (the fleet's forwarder says, never the request),
    whose keys the run's record and result go to (None: the fleet's own)."""
    return execute(task_context.current(), self, request, enqueued_at, tenant)


def execute(rt: task_context.Runtime, task: Any, body: Any, enqueued_at: float | None,
            tenant: str | None = None) -> str:
    """The task body, with the runtime passed in (testable without a worker).

    Raises:
        celery.exceptions.Retry: the run failed on infrastructure or a bug, below the cap.
        celery.exceptions.Reject: ``requeue=True``: Redis refused a step the run needs until
            Celery's time limit came near; the run goes back to the queue (or, if Redis
            refuses that too, stays unacknowledged until the visibility timeout).
    """
    limit = None if rt.time_limit_s is None else rt.time_limit_s - DEADLINE_MARGIN_S
    deadline = rt.patience.deadline(limit)
    try:
        return _execute(rt, task, body, (enqueued_at, keyspace(tenant)), deadline)
    except Refused as err:
        raise Reject(str(err), requeue=True) from err


def _execute(rt: task_context.Runtime, task: Any, body: Any,
             sent: tuple[float | None, Keyspace], deadline: float) -> str:
    (enqueued_at, keys), decoded = sent, decode_loosely(body)
    run_id, life = fallback_run_id(decoded), life_of(decoded)
    attempt = rt.patience.persist(
        "delivery", lambda: rt.publisher.admit(run_id, life.expires_at, life.match,
                                               life.callback_url, keys), deadline)
    if not attempt:
        rt.observer.duplicate()
        return "duplicate"
    where = (_queue(task), life, keys)
    if attempt < 0:  # its match's deadline passed before any worker started it
        return _publish(rt, expired(body, run_id, rt), 1, enqueued_at, where, deadline)
    if attempt > 1:
        rt.observer.redelivered()
    result = _evaluated(rt, task, body, (run_id, attempt), (keys, deadline))
    if result is None:
        log.info("run %s was cancelled: its sandbox ended, its result is the cancel's", run_id)
        return "cancelled"
    return _publish(rt, result, attempt, enqueued_at, where, deadline)


def _evaluated(rt: task_context.Runtime, task: Any, body: Any, delivery: tuple[str, int],
               within: tuple[Keyspace, float]) -> RunResult | None:
    """The run's result, or ``None`` when the platform cancelled it meanwhile (the cancel
    published its result; :mod:`tasks.cancelling`)."""
    (run_id, attempt), (keys, deadline) = delivery, within
    if attempt > rt.delivery_cap:
        # Only deliveries that never returned get here (every failure that returns is capped
        # on its way out): the pool process was lost mid-run each time (SIGKILL, OOM kill, a
        # crash in native code) and task_reject_on_worker_lost requeued it. A poison message
        # must not loop forever, so it is published as failed without running again.
        reason = (f"gave up after {attempt - 1} deliveries that never finished (the worker "
                  "process was lost during each, or the run outlived the visibility timeout)")
        return failed(run_id, "internal_error", reason, rt)
    result: RunResult | None
    with CancelWatch(rt.redis, run_id, keys) as watch:
        try:
            result = run_pipeline(body, WatchedFactory(rt.factory, watch), rt.config,
                                  gate=rt.gate,
                                  close=rt.closer.close_later if rt.closer else close_now)
        except RunCancelled:
            return None
        except SandboxConfigError as err:
            result = failed(run_id, "infra_error", f"sandbox configuration: {err}", rt)
        except INFRA_ERRORS as err:  # a cancelled run's sandbox ends: not a failure
            result = None if watch.cancelled else _retry_or_give_up(
                rt, task, delivery, "infra_error", err, deadline)
        except Exception as err:  # a bug of ours: retried, then published
            result = None if watch.cancelled else _retry_or_give_up(
                rt, task, delivery, "internal_error", err, deadline)
    return None if watch.cancelled else result


def _retry_or_give_up(rt: task_context.Runtime, task: Any, delivery: tuple[str, int],
                      outcome: Any, err: BaseException, deadline: float) -> RunResult:
    (run_id, attempt), reason = delivery, f"{type(err).__name__}: {err}"
    if attempt >= rt.delivery_cap:
        return failed(run_id, outcome, f"gave up after {attempt} deliveries: {reason}", rt)
    countdown = rt.retry_backoff_s * 2 ** (attempt - 1)
    raise rt.patience.persist("retry", lambda: _send_retry(task, err, countdown), deadline)


def _send_retry(task: Any, err: BaseException, countdown: float) -> BaseException:
    """Send the retry message; the ``Retry`` to raise.

    Raises:
        OperationalError: the broker did not take it. Celery turns a retry it cannot send
            (broker unreachable or refusing writes, e.g. at maxmemory) into
            ``Reject(requeue=False)``, which with acks_late deletes the run: no result is
            ever published. The send is tried again instead (``Patience.persist``).
    """
    try:
        sent: BaseException = task.retry(exc=err, countdown=countdown, throw=False)
    except Reject as unsent:
        raise OperationalError(f"retry not sent: {unsent.reason}") from err
    return sent


def failed(run_id: str, outcome: Any, reason: str, rt: task_context.Runtime) -> RunResult:
    """A run that ends without a scorecard (never the candidate's fault)."""
    return RunResult(run_id=run_id, outcome=outcome, reason=reason, worker=rt.config.worker_id,
                     provenance=provenance())


def expired(body: Any, run_id: str, rt: task_context.Runtime) -> RunResult:
    """A run no worker started by its ``expires_at``: it never starts, and its result
    says what Clawdiators records (a draw, no rating change); a request that is not
    valid is rejected as ever."""
    try:
        request = parse_request(body, rt.config.max_request_bytes)
    except Rejection as rejection:
        return rejected(body, rejection, rt.config)
    return RunResult(run_id=run_id, outcome="expired", worker=rt.config.worker_id,
                     reason="not started by its expires_at: it never ran",
                     case_key=request.case_key, metadata=request.metadata,
                     rating=expired_rating(request), provenance=provenance())


def _publish(rt: task_context.Runtime, result: RunResult, attempt: int, enqueued_at: float | None,
             where: tuple[str, Life, Keyspace], deadline: float) -> str:
    queue, life, keys = where
    result.attempt, result.match = attempt, result.match or life.match
    if enqueued_at is not None:
        total = result.timings_ms.get("total", 0.0)
        waited = (time.time() - enqueued_at) * 1000 - total
        result.timings_ms["queue_wait"] = round(max(0.0, waited), 3)
    stats = getattr(rt.factory, "stats", None)
    if callable(stats):  # before publishing: a published run's pool take is already counted
        rt.observer.pool(stats())
    started = time.perf_counter()
    body = rt.publisher.body(result, rt.config.max_result_bytes)
    first = rt.patience.persist("publication", lambda: rt.publisher.publish(result, body, keys),
                                deadline)
    result.timings_ms["publish"] = round((time.perf_counter() - started) * 1000, 3)
    if first:
        rt.observer.run_finished(result, queue, keys.tenant)
    else:
        rt.observer.duplicate()
    return result.outcome if first else "duplicate"


def _queue(task: Any) -> str:
    info = getattr(getattr(task, "request", None), "delivery_info", None) or {}
    return str(info.get("routing_key") or "unknown")
