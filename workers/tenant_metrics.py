"""Per-tenant metrics (issue 47): new series with a ``tenant`` label; the fleet's existing
series keep their labels.

* ``evalfleet_tenant_runs_total{tenant, outcome}`` — a tenant's runs published by this
  node's workers (the fleet's own runs: ``tenant=""`` is not counted here, they are in
  ``evalfleet_runs_total`` as ever);
* ``evalfleet_tenant_intake_waiting{tenant}`` — requests in the tenant's intake stream not
  yet forwarded to the queues (fleet-wide, from Redis);
* ``evalfleet_tenants`` — how many tenants the fleet has.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from prometheus_client import Counter
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from evalfleet.tasks import tenancy
from evalfleet.tasks.redis_keys import keyspace

TENANT_RUNS = Counter("evalfleet_tenant_runs_total",
                      "A tenant's runs finished and published, by outcome.",
                      ["tenant", "outcome"])


def count_run(tenant: str | None, outcome: str) -> None:
    """Count a published run of ``tenant`` (None: the fleet's own, not counted here)."""
    if tenant:
        TENANT_RUNS.labels(tenant, outcome).inc()


class TenantCollector(Collector):
    """The tenants and their waiting intake, fleet-wide from Redis."""

    def __init__(self, redis: Any) -> None:
        self.redis = redis

    def collect(self) -> Iterator[Metric]:
        try:
            names = tenancy.names(self.redis)
            with self.redis.pipeline(transaction=False) as pipe:
                for name in names:
                    pipe.xlen(keyspace(name).intake)
                waiting = pipe.execute()
        except Exception:  # a scrape must not fail because Redis blipped
            return
        count = GaugeMetricFamily("evalfleet_tenants", "Tenants of the fleet.")
        count.add_metric([], float(len(names)))
        family = GaugeMetricFamily("evalfleet_tenant_intake_waiting",
                                   "Requests in a tenant's intake stream not yet forwarded "
                                   "to the queues.", labels=["tenant"])
        for name, length in zip(names, waiting, strict=True):
            family.add_metric([name], float(length))
        yield from (count, family)
