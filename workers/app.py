"""The Celery app and the settings that make a Redis-broker fleet safe (one comment each)."""

from __future__ import annotations

from celery import Celery

from evalfleet.tasks import broker
from evalfleet.tasks.queueing import queue_for, transport_options
from evalfleet.tasks.redis_connection import configure_broker

from .settings import Settings

#: Seconds between the sandbox's own deadline and Celery's soft / hard time limits.
SOFT_LIMIT_MARGIN_S = 60
HARD_LIMIT_MARGIN_S = 120


def longest_run_s(settings: Settings) -> float:
    """The longest wall time any profile allows a run, plus its judging step's deadline
    (after the sandbox): a run is never redelivered for judging slowly, which would give
    the candidate a re-roll."""
    sandbox = max(p.max_wall_s for p in settings.profiles.values())
    return sandbox + settings.judges.total_deadline_s


def soft_time_limit_s(settings: Settings) -> float:
    """Celery's soft time limit of ``evalfleet.run``."""
    return longest_run_s(settings) + SOFT_LIMIT_MARGIN_S


def make_app(settings: Settings) -> Celery:
    """The evalfleet Celery app for ``settings`` (registers ``evalfleet.run``)."""
    # Takes that lose no run, bookkeeping a full Redis still runs (see tasks/broker/).
    broker.install()
    app = Celery("evalfleet")
    # Redis (or Sentinel's primary) redelivers unacked runs after the visibility timeout;
    # priority sub-queues.
    configure_broker(app.conf, settings.redis_url, transport_options(settings.visibility_timeout_s))
    app.conf.update(
        # A run is acknowledged only after its result is published: a worker that dies
        # mid-run leaves it in the queue. Safe because publication is idempotent (SET NX).
        task_acks_late=True,
        # ... and a worker process killed by a signal (OOM killer, SIGKILL) requeues it too.
        task_reject_on_worker_lost=True,
        # One reserved run per process: nothing waits behind a long run on a busy worker.
        worker_prefetch_multiplier=1,
        # Celery's own limits sit above the sandbox deadline, which normally fires first.
        task_soft_time_limit=soft_time_limit_s(settings),
        task_time_limit=longest_run_s(settings) + HARD_LIMIT_MARGIN_S,
        # On broker connection loss, acks_late runs will be redelivered: stop them here.
        worker_cancel_long_running_tasks_on_connection_loss=True,
        # SIGTERM is Celery's warm shutdown: no new runs, in-flight ones finish (no limit of
        # its own: the orchestrator's grace period must cover the longest run). SIGQUIT (or
        # REMAP_SIGTERM) is a soft shutdown: in-flight runs get this long, then a cold stop
        # requeues them (acks_late).
        worker_soft_shutdown_timeout=float(longest_run_s(settings)),
        # Task events for Flower and celery-exporter, published in batches (workers.event_batching).
        worker_send_task_events=True,
        task_send_sent_event=True,
        worker_consumer="evalfleet.workers.event_batching:EventBatchingConsumer",
        # Results are published by evalfleet itself (tasks.publish), not Celery's backend.
        task_ignore_result=True,
        task_default_queue=queue_for("default"),
        task_serializer="json",
        accept_content=["json"],
        broker_connection_retry_on_startup=True,
        worker_hijack_root_logger=False,
    )
    import evalfleet.tasks.run_task  # noqa: F401  (registers the shared task on this app)

    return app
