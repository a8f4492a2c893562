"""Per-tenant metrics (issue 47): new series with a ``tenant`` label; the fleet's existing
series keep their labels.

* ``evalfleet_tenant_runs_total{tenant, outcome}`` — a tenant's runs published by this
  node's workers (the fleet's own runs: ``tenant=""`` is not counted here, they are in
  ``evalfleet_runs_total`` as ever);
* ``evalfleet_tenant_intake_waiting{tenant}`` — requests in the tenant's intake stream not
  yet forwarded to the queues (fleet-wide, from Redis);
* ``evalfleet_tenants`` — how many tenants the fleet has;
* admission (issue 48; fleet-wide, from Redis; the fleet's own runs are ``tenant="(fleet)"``):
  ``evalfleet_tenant_in_flight{tenant}`` (admitted, not yet published),
  ``evalfleet_tenant_waiting{tenant}`` (in the waiting rooms),
  ``evalfleet_tenant_admitted_total{tenant}`` (its share: the rate of this) and
  ``evalfleet_tenant_quota_refusals_total{tenant, quota}``. Every worker exports the same
  fleet-wide values: read them with ``max``, never ``sum``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from prometheus_client import Counter
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from evalfleet.tasks import tenancy
from evalfleet.tasks.admission.share import QUOTAS
from evalfleet.tasks.redis_keys import (
    ADMITTED_KEY,
    FLEET,
    REFUSED_KEY,
    Keyspace,
    admission_keys,
    keyspace,
)

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
        try:
            yield from admission_families(self.redis, names)
        except Exception:  # a scrape must not fail because Redis blipped
            return


#: The label of the fleet's own runs in the admission series.
FLEET_LABEL = "(fleet)"


def admission_families(redis: Any, names: list[str]) -> list[Metric]:
    """The admission series of the fleet's own runs and of each tenant (see the module)."""
    owners = [FLEET, *(keyspace(name) for name in names)]
    with redis.pipeline(transaction=False) as pipe:
        for keys in owners:
            own = admission_keys(keys)
            pipe.zcard(own["in_flight"])
            pipe.get(own["count"])
        pipe.hgetall(ADMITTED_KEY)
        pipe.hgetall(REFUSED_KEY)
        *counts, admitted, refused = pipe.execute()
    labels = [keys.tenant or FLEET_LABEL for keys in owners]
    gauges = {"in_flight": "Runs admitted to the workers and not yet published.",
              "waiting": "Runs in admission's waiting rooms."}
    families = []
    for offset, (name, text) in enumerate(gauges.items()):
        family = GaugeMetricFamily(f"evalfleet_tenant_{name}", text, labels=["tenant"])
        for label, value in zip(labels, counts[offset::2], strict=True):
            family.add_metric([label], float(value or 0))
        families.append(family)
    return [*families, _admitted(owners, labels, admitted), _refused(owners, labels, refused)]


def _admitted(owners: list[Keyspace], labels: list[str], counts: dict[Any, Any]) -> Metric:
    family = CounterMetricFamily("evalfleet_tenant_admitted",
                                 "Runs admitted to the workers (its share: the rate).",
                                 labels=["tenant"])
    for keys, label in zip(owners, labels, strict=True):
        family.add_metric([label], float(counts.get(keys.owner.encode(), 0)))
    return family


def _refused(owners: list[Keyspace], labels: list[str], counts: dict[Any, Any]) -> Metric:
    family = CounterMetricFamily("evalfleet_tenant_quota_refusals",
                                 "Runs refused because their tenant was over a quota.",
                                 labels=["tenant", "quota"])
    for keys, label in zip(owners, labels, strict=True):
        for quota in QUOTAS:
            found = counts.get(f"{keys.owner} {quota}".encode(), 0)
            family.add_metric([label, quota], float(found))
    return family
