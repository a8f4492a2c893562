"""A plain-Redis way in for platforms that do not speak Celery.

A platform appends ``XADD evalfleet:intake * request <RunRequest JSON>``; a forwarder in
each worker reads the stream through the consumer group ``evalfleet-intake`` and enqueues
each request as an ``evalfleet.run`` task (then writes its ``queued`` status record),
acknowledging the entry only after the task is sent. ``XADD evalfleet:intake * cancel
<run_id>`` cancels a run, ``… cancel_match <match>`` every run of a match
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

from ..decoding import life_of
from ..lifecycle import Lifecycle
from ..queueing import TASK_NAME, broker_priority, profile_of, queue_for
from ..redis_keys import INTAKE_GROUP, INTAKE_STREAM
from . import cancels


@dataclass
class IntakeForwarder:
    """Moves intake-stream entries into the Celery queues."""

    redis: Any
    app: Celery
    consumer: str
    reclaim_after_ms: int = 60_000
    ttl_s: int = 7 * 24 * 3600
    """How long a ``queued`` record lives (a worker's transitions renew it)."""

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
        entries = self._read("0", None) or self._claimed() or self._read(">", block_ms)
        for entry_id, fields in entries:
            if fields:  # else trimmed from the stream while it was pending
                self._take(fields)
            self.redis.xack(INTAKE_STREAM, INTAKE_GROUP, entry_id)
        return len(entries)

    def _take(self, fields: dict[bytes, bytes]) -> None:
        """One entry: a request, a cancel, or a match's cancel."""
        if b"cancel" in fields:
            cancels.cancel(self.lifecycle, fields[b"cancel"].decode(errors="replace"))
        elif b"cancel_match" in fields:
            cancels.cancel_match(self.lifecycle, fields[b"cancel_match"].decode(errors="replace"))
        else:
            self._send(fields.get(b"request", b""))

    def _read(self, start: str, block_ms: int | None) -> list[Any]:
        """This forwarder's unsent entries (``0``) or new ones (``>``)."""
        batch = self.redis.xreadgroup(INTAKE_GROUP, self.consumer, {INTAKE_STREAM: start},
                                      count=100, block=block_ms)
        return [e for _, items in batch or [] for e in items]

    def _claimed(self) -> list[Any]:
        _, claimed, *_ = self.redis.xautoclaim(INTAKE_STREAM, INTAKE_GROUP, self.consumer,
                                               self.reclaim_after_ms, count=100)
        return list(claimed)

    def _send(self, raw: bytes) -> None:
        text = raw.decode("utf-8", "replace")
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        body = data if isinstance(data, dict) else {}
        raw_priority = body.get("priority")
        priority = raw_priority if isinstance(raw_priority, int) else 5
        self.app.send_task(TASK_NAME, args=[text], kwargs={"enqueued_at": time.time()},
                           queue=queue_for(profile_of(body.get("pack"))),
                           priority=broker_priority(priority))
        run_id, life = body.get("run_id"), life_of(body)
        if isinstance(run_id, str) and run_id:
            self.lifecycle.queue(run_id, life.match, life.expires_at)
