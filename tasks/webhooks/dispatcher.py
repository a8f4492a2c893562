"""The webhook dispatcher of a worker's main process: results in, deliveries out.

:meth:`Dispatcher.hear` reads the results stream through the consumer group
``evalfleet-webhooks`` (its own unacknowledged entries first, then entries a dead
worker's dispatcher left for ``reclaim_after_ms``, then new ones) and schedules a delivery
for each result whose run has a callback (its request's ``callback_url``, or its match's
in the settings). :meth:`Dispatcher.send_due` sends what is due, one attempt at a time;
several senders may run at once, in this worker and in others (the schedule's claims keep
them apart). Each attempt's answer is recorded in the run's status record and counted by
the :class:`Observer`.
"""

from __future__ import annotations

import logging
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import redis

from .. import tenancy
from ..redis_keys import WEBHOOKS_GROUP, Keyspace
from .config import WebhookConfig
from .payload import LinkPending, Payload, ResultLink, no_link, payload
from .policy import Policy, system_resolver
from .schedule import Schedule, Started, backoff_s
from .signature import HEADER, sign
from .transport import Answer, post

log = logging.getLogger(__name__)
#: Entries of the results stream read per round trip.
READ_COUNT = 100
USER_AGENT = "evalfleet-webhooks/1"


class Observer(Protocol):
    """Hears what the dispatcher does (the worker's metrics)."""

    def attempted(self, kind: str) -> None:
        """An attempt ended with an answer of ``kind`` (:attr:`Answer.kind`)."""

    def finished(self, state: str) -> None:
        """A delivery ended: ``delivered`` or ``failed``."""


class Quiet:
    """An :class:`Observer` that records nothing."""

    def attempted(self, kind: str) -> None:
        pass

    def finished(self, state: str) -> None:
        pass


#: The answer of an attempt that sent nothing because the summary's link is not ready (the
#: archiver has not written the run yet): retried as any other.
WAITING_FOR_ARCHIVE = Answer("not sent: the result is not archived yet (its link waits)",
                             "deferred")


@dataclass
class Dispatcher:
    """Schedules and sends webhooks for one worker (see the module)."""

    redis: Any
    config: WebhookConfig
    consumer: str
    observer: Observer = field(default_factory=Quiet)
    link: ResultLink = no_link
    """A summary's link to the whole result (the archive's, once there is one)."""
    resolve: Callable[[str, int], list[str]] = system_resolver
    reclaim_after_ms: int = 60_000
    refresh_s: float = 5.0
    """How often the tenants are read again (each tenant's results stream is heard, its
    runs delivered with its own allowlist and secrets)."""

    def __post_init__(self) -> None:
        self.schedule = Schedule(self.redis)
        self.policy = self.policy_of(None)
        self.tls = ssl.create_default_context(cafile=self.config.ca_file)
        self._policies: dict[str | None, Policy] = {None: self.policy}
        self.results = tenancy.TenantStreams(self.redis, WEBHOOKS_GROUP, self.consumer,
                                             lambda keys: keys.results_stream, self.refresh_s)

    def policy_of(self, tenant: str | None) -> Policy:
        """Where a run of ``tenant`` may be delivered (its allowlist, the fleet's networks)."""
        source = ("EVALFLEET_WEBHOOKS__ALLOW" if tenant is None
                  else f"EVALFLEET_WEBHOOKS__TENANTS's {tenant!r} allow")
        return Policy.of(self.config.allow_for(tenant), self.config.networks, self.resolve,
                         source)

    def ensure_group(self, start: str = "$") -> None:
        """Create the consumer group unless it exists: at the stream's end when a worker
        starts (a fleet upgraded to webhooks does not replay the week of results before
        it: none of them could name a callback), at its start when it was deleted under a
        running worker (a flushed Redis: whatever is in the new stream is unheard). A
        tenant's stream gets it at its start (:class:`~tasks.tenancy.TenantStreams`).

        Raises:
            redis.RedisError: Redis refused it (other than "it exists").
        """
        self.results.ensure_groups(start)

    def hear(self, block_ms: int = 500) -> int:
        """Schedule the deliveries of the results published since the last read; how many
        entries were read."""
        self.results.refresh()
        try:
            read = (self.results.read("0", READ_COUNT)
                    or self.results.claimed(self.reclaim_after_ms, READ_COUNT)
                    or self.results.read(">", READ_COUNT, block_ms))
        except redis.ResponseError as err:
            if "NOGROUP" not in str(err):
                raise
            self.ensure_group("0")  # the stream or the group was deleted: make it again
            return 0
        for keys, entries in read:
            self._plan(keys, entries)
        return sum(len(entries) for _, entries in read)

    def _plan(self, keys: Keyspace, entries: list[Any]) -> None:
        """Schedule each entry's delivery where its run has a callback; acknowledge all."""
        run_ids = [_text((fields or {}).get(b"run_id")) for _, fields in entries]
        with self.redis.pipeline(transaction=False) as pipe:
            for run_id in run_ids:
                pipe.hmget(keys.status(run_id), "callback_url", "match")
            records = pipe.execute()
        unheard: list[Any] = []  # entries whose run has no callback: one XACK for all
        with self.redis.pipeline(transaction=False) as pipe:
            for (entry_id, _), run_id, (callback, match) in zip(entries, run_ids, records,
                                                                strict=True):
                url = self.config.url_for(_text(callback) or None, _text(match) or None,
                                          keys.tenant)
                if url and run_id:
                    self.schedule.plan(run_id, url, entry_id, client=pipe, keys=keys)
                else:
                    unheard.append(entry_id)
            if unheard:
                pipe.xack(keys.results_stream, WEBHOOKS_GROUP, *unheard)
            pipe.execute()

    def send_due(self) -> int:
        """Send every delivery due now, one at a time; how many attempts were made."""
        sent = 0
        while claimed := self.schedule.claim(self.config.lease_s):
            started = self.schedule.start(claimed[0], self.config.give_up_after_s)
            if isinstance(started, Started):
                self.attempt(started)
                sent += 1
            elif started == "failed":
                self.observer.finished(started)
        return sent

    def attempt(self, started: Started) -> str:
        """One attempt of a delivery, recorded; the delivery's state after it."""
        config, when = self.config, time.time()
        try:
            sent = payload(started.body, config.max_body_bytes, self.link, started.tenant)
            answer = self._send(started, sent, int(when))
        except LinkPending:  # a summary whose link the archive cannot give yet: later
            sent, answer = Payload(b"", "summary"), WAITING_FOR_ARCHIVE
        wait = backoff_s(started.attempt, config.first_retry_s, config.max_retry_s)
        state = self.schedule.finish(started, answer, when, (wait, config.give_up_after_s),
                                     sent.kind)
        self.observer.attempted(answer.kind)
        if state in ("delivered", "failed"):
            self.observer.finished(state)
        log.info("webhook of %s, attempt %d: %s (%s)", started.run_id, started.attempt,
                 answer.text, state)
        return state


    def _send(self, started: Started, sent: Payload, timestamp: int) -> Answer:
        """POST ``sent``, signed with the secrets of the run's match (or tenant), to where
        its tenant may be called, or refuse it when there is no secret: nothing leaves
        unsigned."""
        secrets = self.config.secrets_for(started.match or None, started.tenant)
        if not secrets:
            where = ("EVALFLEET_WEBHOOKS__SECRETS" if started.tenant is None else
                     f"EVALFLEET_WEBHOOKS__TENANTS's {started.tenant!r}")
            return Answer(f"refused: no signing secret ({where})", "refused")
        if started.tenant not in self._policies:
            self._policies[started.tenant] = self.policy_of(started.tenant)
        policy = self._policies[started.tenant]
        headers = _headers(started, sent.kind, sign(sent.body, secrets, timestamp))
        return post(started.url, sent.body, headers, policy, self.config.timeout_s, self.tls)


def _headers(started: Started, kind: str, signature: str) -> dict[str, str]:
    return {"Content-Type": "application/json", "User-Agent": USER_AGENT,
            HEADER: signature, "Idempotency-Key": started.run_id,
            "Evalfleet-Run-Id": started.run_id, "Evalfleet-Attempt": str(started.attempt),
            "Evalfleet-Body": kind}


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)
