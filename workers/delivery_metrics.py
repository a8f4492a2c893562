"""The metrics of the results' way out (contracts, as those of :mod:`.metrics`): webhook
deliveries (``evalfleet_webhook_*``) and the archive (``evalfleet_archive_*``).

The worker's main process counts webhook attempts (:class:`WebhookMetrics`) and reads the
schedule and the archive's backlog at scrape time (:class:`WebhookCollector`,
:class:`ArchiveCollector`); the archiver's process carries its tally into counters
(:class:`ArchiveCounters`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from prometheus_client import Counter
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from evalfleet.tasks.archive.backlog import archive_backlog
from evalfleet.tasks.redis_keys import ARCHIVE_REFUSAL_KEY
from evalfleet.tasks.webhooks.schedule import oldest_undelivered_s

WEBHOOK_ATTEMPTS = Counter("evalfleet_webhook_attempts_total",
                           "Webhook attempts by answer (2xx, 3xx: a redirect, never followed, "
                           "4xx, 5xx, timeout, connection, refused: by the policy, never sent).",
                           ["answer"])
#: Every answer class (exported at 0 from the start, for the dashboard and the alerts).
WEBHOOK_ANSWERS = ("2xx", "3xx", "4xx", "5xx", "timeout", "connection", "refused")
WEBHOOK_DELIVERIES = Counter("evalfleet_webhook_deliveries_total",
                             "Webhook deliveries ended: delivered, or failed (given up).",
                             ["state"])


class WebhookMetrics:
    """The :class:`tasks.webhooks.dispatcher.Observer` that counts attempts and ends."""

    def __init__(self) -> None:
        for answer in WEBHOOK_ANSWERS:
            WEBHOOK_ATTEMPTS.labels(answer)
        for state in ("delivered", "failed"):
            WEBHOOK_DELIVERIES.labels(state)

    def attempted(self, kind: str) -> None:
        WEBHOOK_ATTEMPTS.labels(kind).inc()

    def finished(self, state: str) -> None:
        WEBHOOK_DELIVERIES.labels(state).inc()


class WebhookCollector(Collector):
    """Webhook deliveries not yet done, and the age of the oldest (read at scrape)."""

    def __init__(self, redis: Any) -> None:
        self.redis = redis

    def collect(self) -> Iterator[GaugeMetricFamily]:
        try:
            count, oldest = oldest_undelivered_s(self.redis)
        except Exception:  # a scrape must not fail because Redis blipped
            return
        pending = GaugeMetricFamily("evalfleet_webhook_pending",
                                    "Webhook deliveries scheduled and not yet done.")
        pending.add_metric([], float(count))
        age = GaugeMetricFamily("evalfleet_webhook_oldest_undelivered_seconds",
                                "How long ago the oldest webhook delivery not yet done was "
                                "scheduled (0: none).")
        age.add_metric([], oldest)
        yield from (pending, age)


class ArchiveCollector(Collector):
    """The archive, fleet-wide from Redis: results waiting for it
    (``evalfleet_archive_backlog``) and whether new runs are refused for it."""

    def __init__(self, redis: Any) -> None:
        self.redis = redis

    def collect(self) -> Iterator[Metric]:
        try:
            backlog = float(archive_backlog(self.redis))
            refusing = float(bool(self.redis.exists(ARCHIVE_REFUSAL_KEY)))
        except Exception:  # a scrape must not fail because Redis blipped
            return
        yield _gauge("evalfleet_archive_backlog", "Results published and not yet written to "
                     "the archive (they stay in Redis until they are).", backlog)
        yield _gauge("evalfleet_archive_refusing", "1 while new runs are refused because the "
                     "archive's backlog would outgrow Redis's memory.", refusing)


def _gauge(name: str, text: str, value: float) -> GaugeMetricFamily:
    family = GaugeMetricFamily(name, text)
    family.add_metric([], value)
    return family


ARCHIVE_WRITES = Counter("evalfleet_archive_writes_total",
                         "Results this node's archiver wrote to the archive.")
ARCHIVE_BYTES = Counter("evalfleet_archive_bytes_total",
                        "Bytes of archived objects this node's archiver wrote.")
ARCHIVE_FAILURES = Counter("evalfleet_archive_failures_total",
                           "Archive writes that failed (the store was down, full or refused; "
                           "each is retried).")
ARCHIVE_MISSING = Counter("evalfleet_archive_missing_total",
                          "Results gone from Redis before they could be archived (published "
                          "before the archive was on).")


class ArchiveCounters:
    """Carries an archiver's tally into the counters (the archiver's own process writes
    them into the multiprocess directory, which the worker's registry reads)."""

    def __init__(self) -> None:
        self.seen = (0, 0, 0, 0)

    def update(self, tally: Any) -> None:
        now = (tally.archived, tally.bytes, tally.failures, tally.missing)
        for counter, before, after in zip(
                (ARCHIVE_WRITES, ARCHIVE_BYTES, ARCHIVE_FAILURES, ARCHIVE_MISSING),
                self.seen, now, strict=True):
            if after > before:
                counter.inc(after - before)
        self.seen = now
