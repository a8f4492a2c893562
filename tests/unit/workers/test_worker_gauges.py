"""The worker-node gauges the stall and leak alerts read (deploy/prometheus/alerts.yml)."""

from __future__ import annotations

import time
from dataclasses import dataclass

import pytest
from celery.signals import task_prerun
from celery.worker import state

from evalfleet.tasks.queueing import TASK_NAME
from evalfleet.workers.metrics import (
    LAST_RUN_STARTED,
    POOL_TAKES,
    ActiveRunsCollector,
    FleetMetrics,
)


@dataclass(frozen=True)
class Named:
    """Stands in for a Celery task or request: both are matched by ``name``."""

    name: str
    key: int = 0


def last_started() -> float:
    return float(LAST_RUN_STARTED._value.get())


def test_a_run_starting_sets_the_last_started_time() -> None:
    # Given an old value
    LAST_RUN_STARTED.set(1.0)
    # When Celery is about to run an evalfleet.run task
    task_prerun.send(sender=Named(name=TASK_NAME), task_id="t", task=None)
    # Then the gauge holds the current time
    assert time.time() - last_started() < 5


def test_other_tasks_do_not_count_as_runs() -> None:
    LAST_RUN_STARTED.set(1.0)
    task_prerun.send(sender=Named(name="celery.ping"), task_id="t", task=None)
    assert last_started() == 1.0


def test_active_runs_come_from_the_workers_own_state(monkeypatch: pytest.MonkeyPatch) -> None:
    requests = {Named(TASK_NAME, 1), Named(TASK_NAME, 2),
                Named("other")}
    monkeypatch.setattr(state, "active_requests", requests)

    (family,) = ActiveRunsCollector().collect()

    assert family.name == "evalfleet_worker_runs_active"
    assert [s.value for s in family.samples] == [2.0]


@dataclass(frozen=True)
class Stats:
    """A pool's counters as :meth:`sandbox.docker.pool.WarmPool.stats` reports them."""

    hits: int
    profile: str = "gauges-test"
    target: int = 2
    idle: int = 1
    misses: int = 0
    reuse_runs: int = 1


def hits() -> float:
    return float(POOL_TAKES.labels("gauges-test", "hit")._value.get())


def test_pool_counters_reported_out_of_order_count_each_take_once() -> None:
    # Given the run's thread and the refill thread reporting snapshots of one pool
    metrics, before = FleetMetrics(), hits()
    # When a newer snapshot (6 hits) is recorded before an older one (5), then a later one
    for total in (6, 5, 7):
        metrics.pool([Stats(hits=total)])
    # Then the counter grew by the highest total seen, never counting a take twice
    assert hits() - before == 7
