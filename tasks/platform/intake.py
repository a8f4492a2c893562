"""The fleet's way in: the intake stream, and the workers' forwarder out of it.

Every run enters as ``XADD evalfleet:intake * request <RunRequest JSON>``: the clients'
submissions (:mod:`.submission`, which also write the ``queued`` record), or a platform
that speaks plain Redis. A forwarder in each worker reads the stream through the consumer
group ``evalfleet-intake`` and enqueues each request as an ``evalfleet.run`` task, at its
priority, in batches (then writes the ``queued`` records the clients did not), and
acknowledges and deletes the entries only after their tasks are sent: the stream holds
only what waits. ``XADD evalfleet:intake * cancel <run_id>`` cancels a run,
``… cancel_match <match>`` every run of a match
(:mod:`tasks.platform.cancels`). A forwarder first sends again what it read but could
not send (a full or unreachable Redis refused the task), then what a dead forwarder had
claimed and left for ``reclaim_after_ms``, then new entries. Invalid requests are
forwarded as they are: the worker publishes them as ``rejected``.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

import redis
from celery import Celery

from .. import broker
from ..decoding import life_of
from ..lifecycle import Lifecycle
from ..queueing import TASK_NAME, broker_priority, profile_of, queue_for, transport_options
from ..redis_connection import configure_broker
from ..redis_keys import INTAKE_GROUP, INTAKE_STREAM
from . import cancels


def sender_app(redis_url: str, visibility_timeout_s: int = 3600) -> Celery:
    """A Celery app that only sends ``evalfleet.run`` (same transport options as workers;
    evalfleet's broker channel, which rings a queue's doorbell with each run)."""
    broker.install()
    app = Celery("evalfleet-sender", set_as_current=False)
    configure_broker(app.conf, redis_url, transport_options(visibility_timeout_s))
    app.conf.broker_connection_retry_on_startup = True
    return app


@dataclass
class IntakeForwarder:
    """Moves intake-stream entries into the Celery queues."""

    redis: Any
    app: Celery
    consumer: str
    reclaim_after_ms: int = 60_000
    ttl_s: int = 7 * 24 * 3600
    """How long a ``queued`` record lives (a worker's transitions renew it)."""
    seal: cancels.Seal = cancels.unsigned
    """How the cancels it carries out are published: the worker passes its signer's."""

    def __post_init__(self) -> None:
        self.lifecycle = Lifecycle(self.redis, self.ttl_s)

    def ensure_group(self) -> None:
        try:
            self.redis.xgroup_create(INTAKE_STREAM, INTAKE_GROUP, id="0", mkstream=True)
        except redis.ResponseError as err:
            if "BUSYGROUP" not in str(err):
                raise

    def forward_once(self, block_ms: int = 1000) -> int:
        """Forward what is waiting (and what a dead forwarder left); returns how many."""
        try:
            return self._forward(block_ms)
        except redis.ResponseError as err:
            if "NOGROUP" not in str(err):
                raise
            self.ensure_group()  # the stream or group was deleted (e.g. FLUSHDB): recreate
            return 0

    def _forward(self, block_ms: int) -> int:
        """One read's entries, in order: runs of consecutive requests are sent in one
        batch (their ``queued`` records in one round trip); every entry is then
        acknowledged and deleted, in one round trip."""
        entries = self._read("0", None) or self._claimed() or self._read(">", block_ms)
        requests: list[tuple[bytes, bytes]] = []
        for entry_id, fields in entries:
            if fields and b"cancel" not in fields and b"cancel_match" not in fields:
                requests.append((entry_id, fields.get(b"request", b"")))
            elif fields:  # else trimmed from the stream while it was pending
                self._send(requests)
                requests = []
                self._cancel(fields)
        self._send(requests)
        self._done([entry_id for entry_id, _ in entries])
        return len(entries)

    def _cancel(self, fields: dict[bytes, bytes]) -> None:
        """A cancel entry: one run, or a match's runs."""
        if b"cancel" in fields:
            cancels.cancel(self.lifecycle, fields[b"cancel"].decode(errors="replace"), self.seal)
        else:
            cancels.cancel_match(self.lifecycle, fields[b"cancel_match"].decode(errors="replace"),
                                 self.seal)

    def _done(self, entry_ids: list[bytes]) -> None:
        """Acknowledge and delete forwarded entries (the stream keeps only what waits)."""
        if entry_ids:
            with self.redis.pipeline(transaction=False) as pipe:
                pipe.xack(INTAKE_STREAM, INTAKE_GROUP, *entry_ids)
                pipe.xdel(INTAKE_STREAM, *entry_ids)
                pipe.execute()

    def _read(self, start: str, block_ms: int | None) -> list[Any]:
        """This forwarder's unsent entries (``0``) or new ones (``>``)."""
        batch = self.redis.xreadgroup(INTAKE_GROUP, self.consumer, {INTAKE_STREAM: start},
                                      count=100, block=block_ms)
        return [e for _, items in batch or [] for e in items]

    def _claimed(self) -> list[Any]:
        _, claimed, *_ = self.redis.xautoclaim(INTAKE_STREAM, INTAKE_GROUP, self.consumer,
                                               self.reclaim_after_ms, count=100)
        return list(claimed)

    def _send(self, entries: list[tuple[bytes, bytes]]) -> None:
        """Record the requests of ``entries`` ``queued``, then queue those that are not
        duplicates of a run id already submitted (one batch)."""
        if not entries:
            return
        bodies = [_body(raw) for _, raw in entries]
        kept = [body for body, fresh in zip(bodies, self._recorded(entries, bodies),
                                            strict=True) if fresh]
        with self.app.producer_or_acquire() as producer, \
                producer.batch(max_size=len(kept) + 1):
            for text, body in kept:
                self.app.send_task(TASK_NAME, args=[text], kwargs={"enqueued_at": time.time()},
                                   queue=queue_for(profile_of(body.get("pack"))),
                                   priority=broker_priority(_priority(body)),
                                   producer=producer, argsrepr=f"[run {body.get('run_id')}]")

    def _recorded(self, entries: list[tuple[bytes, bytes]],
                  bodies: list[tuple[str, dict[str, Any]]]) -> list[bool]:
        """Each request's ``queued`` record, in one round trip: False for a duplicate
        (its run id's record names another entry). A request with no run id is sent: its
        worker rejects it."""
        with self.redis.pipeline(transaction=False) as pipe:
            asked = []
            for (entry_id, _), (_, body) in zip(entries, bodies, strict=True):
                run_id, life = body.get("run_id"), life_of(body)
                asked.append(isinstance(run_id, str) and bool(run_id))
                if isinstance(run_id, str) and run_id:
                    self.lifecycle.queue(run_id, life.match, life.expires_at,
                                         entry_id.decode(), client=pipe,
                                         callback_url=life.callback_url)
            replies = iter(pipe.execute())
        return [next(replies) != 0 if wanted else True for wanted in asked]


def _body(raw: bytes) -> tuple[str, dict[str, Any]]:
    """A request's text, and its JSON object ({} when it is none: the worker rejects it)."""
    text = raw.decode("utf-8", "replace")
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    return text, data if isinstance(data, dict) else {}


def _priority(body: dict[str, Any]) -> int:
    found = body.get("priority")
    return found if isinstance(found, int) else 5
