"""The fleet's way in: the intake stream, and the workers' forwarder out of it.

Every run enters as ``XADD evalfleet:intake * request <RunRequest JSON>``: the clients'
submissions (:mod:`.submission`, which also write the ``queued`` record), or a platform
that speaks plain Redis. A forwarder in each worker reads the stream through the consumer
group ``evalfleet-intake`` and enqueues each request as an ``evalfleet.run`` task, at its
priority, in batches (then writes the ``queued`` records the clients did not), and
acknowledges and deletes the entries only after their tasks are sent: the stream holds
only what waits. ``XADD evalfleet:intake * cancel <run_id>`` cancels a run,
``… cancel_match <match>`` every run of a match
(:mod:`tasks.platform.cancels`). With admission on (:mod:`tasks.admission`), the
forwarder parks each run in its waiting room instead, for the admitter to send. A forwarder
first sends again what it read but could
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

from .. import broker, tenancy
from ..admission.parking import Parking
from ..decoding import life_of
from ..lifecycle import Lifecycle
from ..queueing import profile_of, queue_for, transport_options
from ..redis_connection import configure_broker
from ..redis_keys import FLEET, INTAKE_GROUP, Keyspace
from ..sending import Outgoing, send_runs
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
    """Moves intake-stream entries into the Celery queues: the fleet's own stream and
    every tenant's (:mod:`tasks.tenancy`; the list is read again every ``refresh_s``).
    A tenant's runs are sent with its name: their records and results go to its keys."""

    redis: Any
    app: Celery
    consumer: str
    reclaim_after_ms: int = 60_000
    ttl_s: int = 7 * 24 * 3600
    """How long a ``queued`` record lives (a worker's transitions renew it)."""
    seal: cancels.Seal = cancels.unsigned
    """How the cancels it carries out are published: the worker passes its signer's."""
    refresh_s: float = 5.0
    """How often the tenants are read again (a new tenant's first runs wait that long)."""
    parking: Parking | None = None
    """With admission (:mod:`tasks.admission`): runs wait in its rooms, not in the queues."""

    def __post_init__(self) -> None:
        self.lifecycle = Lifecycle(self.redis, self.ttl_s)
        self._lifecycles: dict[Keyspace, Lifecycle] = {FLEET: self.lifecycle}
        self.intakes = tenancy.TenantStreams(self.redis, INTAKE_GROUP, self.consumer,
                                             lambda keys: keys.intake, self.refresh_s)

    def ensure_group(self) -> None:
        """Make the consumer group on every intake stream it reads."""
        self.intakes.ensure_groups()

    def forward_once(self, block_ms: int = 1000) -> int:
        """Forward what is waiting (and what a dead forwarder left); returns how many."""
        self.intakes.refresh()
        try:
            read = (self.intakes.read("0", 100) or self.intakes.claimed(self.reclaim_after_ms, 100)
                    or self.intakes.read(">", 100, block_ms))
        except redis.ResponseError as err:
            if "NOGROUP" not in str(err):
                raise
            self.ensure_group()  # the stream or group was deleted (e.g. FLUSHDB): recreate
            return 0
        return sum(self._forward_stream(keys, entries) for keys, entries in read)

    def lifecycle_of(self, keys: Keyspace) -> Lifecycle:
        """The scripts on the keys of ``keys`` (a tenant's, or the fleet's own)."""
        if keys not in self._lifecycles:
            self._lifecycles[keys] = Lifecycle(self.redis, self.ttl_s, keys)
        return self._lifecycles[keys]

    def _forward_stream(self, keys: Keyspace, entries: list[Any]) -> int:
        """One stream's entries, in order: runs of consecutive requests are sent in one
        batch (their ``queued`` records in one round trip); every entry is then
        acknowledged and deleted, in one round trip."""
        requests: list[tuple[bytes, bytes]] = []
        for entry_id, fields in entries:
            if fields and b"cancel" not in fields and b"cancel_match" not in fields:
                requests.append((entry_id, fields.get(b"request", b"")))
            elif fields:  # else trimmed from the stream while it was pending
                self._send(keys, requests)
                requests = []
                self._cancel(keys, fields)
        self._send(keys, requests)
        self._done(keys, [entry_id for entry_id, _ in entries])
        return len(entries)

    def _cancel(self, keys: Keyspace, fields: dict[bytes, bytes]) -> None:
        """A cancel entry: one run, or a match's runs (of the stream's tenant)."""
        lifecycle = self.lifecycle_of(keys)
        if b"cancel" in fields:
            cancels.cancel(lifecycle, fields[b"cancel"].decode(errors="replace"), self.seal)
        else:
            cancels.cancel_match(lifecycle, fields[b"cancel_match"].decode(errors="replace"),
                                 self.seal)

    def _done(self, keys: Keyspace, entry_ids: list[bytes]) -> None:
        """Acknowledge and delete forwarded entries (the stream keeps only what waits)."""
        if entry_ids:
            with self.redis.pipeline(transaction=False) as pipe:
                pipe.xack(keys.intake, INTAKE_GROUP, *entry_ids)
                pipe.xdel(keys.intake, *entry_ids)
                pipe.execute()

    def _send(self, keys: Keyspace, entries: list[tuple[bytes, bytes]]) -> None:
        """Record the requests of ``entries`` ``queued``, then queue those that are not
        duplicates of a run id already submitted (one batch)."""
        if not entries:
            return
        bodies = [_body(raw) for _, raw in entries]
        kept = [(entry_id, body) for (entry_id, _), body, fresh in
                zip(entries, bodies, self._recorded(keys, entries, bodies), strict=True)
                if fresh]
        now = time.time()
        runs = [(Outgoing(keys, _run_id(body), text, queue_for(profile_of(body.get("pack"))),
                          _priority(body), entry_id.decode(), now), life_of(body).match)
                for entry_id, (text, body) in kept]
        if self.parking is not None and self.parking.on:
            send_runs(self.app, self.parking.park(runs))
        else:
            send_runs(self.app, [run for run, _ in runs])

    def _recorded(self, keys: Keyspace, entries: list[tuple[bytes, bytes]],
                  bodies: list[tuple[str, dict[str, Any]]]) -> list[bool]:
        """Each request's ``queued`` record, in one round trip: False for a duplicate
        (its run id's record names another entry). A request with no run id is sent: its
        worker rejects it."""
        lifecycle = self.lifecycle_of(keys)
        with self.redis.pipeline(transaction=False) as pipe:
            asked = []
            for (entry_id, _), (_, body) in zip(entries, bodies, strict=True):
                run_id, life = body.get("run_id"), life_of(body)
                asked.append(isinstance(run_id, str) and bool(run_id))
                if isinstance(run_id, str) and run_id:
                    lifecycle.queue(run_id, life.match, life.expires_at, entry_id.decode(),
                                    client=pipe, callback_url=life.callback_url)
            replies = iter(pipe.execute())
        return [next(replies) != 0 if wanted else True for wanted in asked]


def _run_id(body: dict[str, Any]) -> str | None:
    run_id = body.get("run_id")
    return run_id if isinstance(run_id, str) and run_id else None


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
