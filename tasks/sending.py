"""Sending runs to their Celery queues: what the intake's forwarder does with admission
off, and the admitter with it on (:mod:`tasks.admission`).

Every message of a run that came in by an intake entry carries the entry
(:data:`~tasks.broker.kombu_channel.ONCE_HEADER`): the broker channel queues it once per
entry (``PUT_ONCE``), however many forwarders or admitters send it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from celery import Celery

from .broker.kombu_channel import ONCE_HEADER
from .queueing import TASK_NAME, broker_priority
from .redis_keys import Keyspace


@dataclass(frozen=True)
class Outgoing:
    """One run's message: its request as it came, where it goes and at which priority."""

    keys: Keyspace
    run_id: str | None
    """None for a request without a run id (its worker rejects it)."""
    request: str
    queue: str
    priority: int
    entry: str
    enqueued_at: float

    def headers(self) -> dict[str, Any]:
        if not self.run_id:
            return {}
        return {ONCE_HEADER: [self.keys.status(self.run_id), self.entry]}


def send_runs(app: Celery, runs: list[Outgoing]) -> None:
    """Send ``runs`` as ``evalfleet.run`` tasks, in one batch (a tenant's with its name).

    Raises:
        kombu's and redis's errors: Redis refused or could not be reached (nothing is
            acknowledged: the caller sends them again, and each is queued once).
    """
    if not runs:
        return
    with app.producer_or_acquire() as producer, producer.batch(max_size=len(runs) + 1):
        for run in runs:
            tenant = {} if run.keys.tenant is None else {"tenant": run.keys.tenant}
            app.send_task(TASK_NAME, args=[run.request],
                          kwargs={"enqueued_at": run.enqueued_at, **tenant},
                          queue=run.queue, priority=broker_priority(run.priority),
                          producer=producer, argsrepr=f"[run {run.run_id}]",
                          headers=run.headers())
