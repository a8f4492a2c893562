"""Every Prometheus collector evalfleet exports, defined once (names are contracts).

Works under Celery's prefork pool: the worker sets ``PROMETHEUS_MULTIPROC_DIR`` *before*
``prometheus_client`` is imported (see :mod:`workers.worker`), each pool process writes its
own files, and the main process serves the merged view plus live collectors (queue depth,
unacked runs, containers alive) computed at scrape time. Labels come from small closed sets;
never a run id.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Sequence
from typing import Any

from celery.signals import task_prerun
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from evalfleet.sandbox.docker.labels import LABEL_WORKER
from evalfleet.sandbox.docker.listing import labelled
from evalfleet.tasks.messages import RunResult
from evalfleet.tasks.platform.result_groups import GroupState, group_states
from evalfleet.tasks.queueing import TASK_NAME, queue_for, queue_lists
from evalfleet.tasks.redis_keys import RESULTS_STREAM, depth_key

from .tenant_metrics import count_run

PHASE_BUCKETS = (.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600)
SCORE_BUCKETS = tuple(range(100, 1001, 100))

RUNS = Counter("evalfleet_runs_total", "Runs finished and published, by outcome.",
               ["outcome", "queue"])
RUN_SECONDS = Histogram("evalfleet_run_duration_seconds", "A run's total time in the worker.",
                        ["queue"], buckets=PHASE_BUCKETS)
PHASE_SECONDS = Histogram("evalfleet_run_phase_seconds", "Time per pipeline phase.",
                          ["phase"], buckets=PHASE_BUCKETS)
VERDICTS = Counter("evalfleet_validator_verdicts_total", "Validator outcomes by type.",
                   ["validator_type", "outcome_class"])
RESULTS = Counter("evalfleet_results_total", "Scorecards by Clawdiators result.", ["result"])
SCORES = Histogram("evalfleet_score", "Scorecard scores on the 0-1000 scale.",
                   buckets=SCORE_BUCKETS)
REDELIVERIES = Counter("evalfleet_redeliveries_total", "Runs delivered more than once.")
DUPLICATES = Counter("evalfleet_duplicate_publications_total",
                     "Executions whose result was already published (nothing new published).")
REFUSALS = Counter("evalfleet_redis_refusals_total",
                   "Redis steps a run needed that Redis refused or could not take (full, "
                   "loading, unreachable); each is retried.", ["step"])
#: The steps tasks/run_task.py waits on (exported at 0 from the start, for the alert).
REFUSAL_STEPS = ("delivery", "retry", "publication")
CAPTURE_BYTES = Counter("evalfleet_capture_bytes_total", "Bytes captured from sandboxes.")
CAPTURE_TRUNCATIONS = Counter("evalfleet_capture_truncations_total",
                              "File captures cut at their cap.")
SANDBOX_EVENTS = Counter("evalfleet_sandbox_events_total",
                         "Candidate limits hit in sandboxes.", ["event"])
PREFLIGHTS = Counter("evalfleet_preflight_runs_total",
                     "Runs by their pack's preflight status (when the operator requires or "
                     "flags it), and whether they ran or were refused.", ["status", "action"])
# "max" across the node's processes (dead pool processes included): the newest start wins.
LAST_RUN_STARTED = Gauge("evalfleet_worker_last_run_started_timestamp_seconds",
                         "Unix time a run last started on this worker node "
                         "(the node's start until its first run).", multiprocess_mode="max")


def _run_started(sender: Any = None, **_: Any) -> None:
    if getattr(sender, "name", None) == TASK_NAME:
        LAST_RUN_STARTED.set_to_current_time()


# Connected on import: the worker's main process imports this module before the pool forks
# (workers.services.main_services), so every pool process inherits the receiver.
task_prerun.connect(_run_started, weak=False)


POOL_TARGET = Gauge("evalfleet_sandbox_pool_target", "Warm sandboxes wanted per profile.",
                    ["profile"], multiprocess_mode="livesum")
POOL_IDLE = Gauge("evalfleet_sandbox_pool_idle", "Warm sandboxes ready per profile.",
                  ["profile"], multiprocess_mode="livesum")
POOL_TAKES = Counter("evalfleet_sandbox_pool_takes_total",
                     "Sandbox acquisitions by pool outcome (hit: warm, miss: cold).",
                     ["profile", "outcome"])
REUSES = Counter("evalfleet_sandbox_reuses_total",
                 "Runs served by a sandbox that had served a run before (after its verified "
                 "reset).", ["profile"])
DISCARDS = Counter("evalfleet_sandbox_discards_total",
                   "Used sandboxes of a reusing profile removed instead of reused, by reason "
                   "(runs, oom, deadline, timeout, output, broken, unverified, expired, "
                   "closing).", ["profile", "reason"])
RESET_SECONDS = Histogram("evalfleet_sandbox_reset_seconds",
                          "Round trip of a sandbox's reset between two runs, by whether it "
                          "was verified.", ["profile", "verified"],
                          buckets=(.0005, .001, .0025, .005, .01, .025, .05, .1, .25, 1, 5))


class FleetMetrics:
    """The :class:`tasks.task_context.Observer` that records into the collectors above."""

    def __init__(self) -> None:
        self._pool_seen: dict[tuple[str, str], int] = {}
        self._pool_lock = threading.Lock()
        for step in REFUSAL_STEPS:
            REFUSALS.labels(step)

    def run_finished(self, result: RunResult, queue: str, tenant: str | None = None) -> None:
        RUNS.labels(result.outcome, queue).inc()
        count_run(tenant, result.outcome)
        for phase, ms in result.timings_ms.items():
            PHASE_SECONDS.labels(phase).observe(ms / 1000)
        RUN_SECONDS.labels(queue).observe(result.timings_ms.get("total", 0.0) / 1000)
        self._sandbox(result.resources)
        if result.preflight is not None:
            action = "refused" if result.outcome == "rejected" else "ran"
            PREFLIGHTS.labels(result.preflight.status, action).inc()
        card = result.scorecard
        if card is None:
            return
        for detail in card.validator_details:
            VERDICTS.labels(detail.type, detail.outcome_class).inc()
        RESULTS.labels(card.result or "none").inc()
        if card.score is not None:
            SCORES.observe(card.score)

    def _sandbox(self, resources: dict[str, Any]) -> None:
        CAPTURE_BYTES.inc(int(resources.get("capture_bytes", 0)))
        CAPTURE_TRUNCATIONS.inc(int(resources.get("captures_truncated", 0)))
        for event in ("oom_killed", "timed_out", "output_truncated", "deadline_exceeded"):
            if resources.get(event):
                SANDBOX_EVENTS.labels(event).inc()

    def pool(self, stats: list[Any]) -> None:
        """Record a warm pool's counters (cumulative per process) as gauges and deltas."""
        for entry in stats:
            POOL_TARGET.labels(entry.profile).set(entry.target)
            POOL_IDLE.labels(entry.profile).set(entry.idle)
            for outcome, total in (("hit", entry.hits), ("miss", entry.misses)):
                POOL_TAKES.labels(entry.profile, outcome).inc(
                    self._delta((entry.profile, outcome), total))
            if entry.reuse_runs > 1:
                REUSES.labels(entry.profile).inc(self._delta((entry.profile, "reuse"),
                                                             entry.reuses))
                for reason, total in entry.discards.items():
                    DISCARDS.labels(entry.profile, reason).inc(
                        self._delta((entry.profile, f"discard:{reason}"), total))

    def _delta(self, key: tuple[str, str], total: int) -> int:
        """How much a cumulative pool counter grew since the highest total seen (the
        run's thread and the pool's refill thread both report, each its own snapshot)."""
        with self._pool_lock:
            seen = self._pool_seen.get(key, 0)
            self._pool_seen[key] = max(seen, total)
            return max(0, total - seen)

    def reset(self, profile: str, outcome: Any) -> None:
        """One sandbox reset (:class:`sandbox.docker.reuse.ResetOutcome`)."""
        RESET_SECONDS.labels(profile, str(outcome.verified).lower()).observe(outcome.duration_s)

    def duplicate(self) -> None:
        DUPLICATES.inc()

    def redelivered(self) -> None:
        REDELIVERIES.inc()

    def refused(self, step: str) -> None:
        REFUSALS.labels(step).inc()


class QueueCollector(Collector):
    """Queue depth per queue (every priority sub-list) and unacked runs, read at scrape."""

    def __init__(self, redis: Any, queues: list[str]) -> None:
        self.redis, self.queues = redis, queues

    def collect(self) -> Iterator[GaugeMetricFamily]:
        depth = GaugeMetricFamily("evalfleet_queue_depth", "Runs waiting, by queue.",
                                  labels=["queue"])
        unacked = GaugeMetricFamily("evalfleet_queue_unacked",
                                    "Runs reserved by a worker and not yet acknowledged.")
        oldest = GaugeMetricFamily("evalfleet_queue_oldest_unacked_seconds",
                                   "Age of the oldest unacknowledged run.")
        waiting = GaugeMetricFamily("evalfleet_admission_waiting",
                                    "Runs waiting in admission's rooms for a queue (they are "
                                    "not in the queue yet: scale on both).", labels=["queue"])
        try:
            for profile in self.queues:
                depth.add_metric([queue_for(profile)], self._depth(queue_for(profile)))
                waiting.add_metric([queue_for(profile)],
                                   float(self.redis.llen(depth_key(queue_for(profile)))))
            unacked.add_metric([], float(self.redis.hlen("unacked")))
            oldest.add_metric([], self._oldest())
        except Exception:  # a scrape must not fail because Redis blipped
            return
        yield from (depth, unacked, oldest, waiting)

    def _depth(self, queue: str) -> float:
        return float(sum(self.redis.llen(name) for name in queue_lists(queue)))

    def _oldest(self) -> float:
        first = self.redis.zrange("unacked_index", 0, 0, withscores=True)
        return max(0.0, time.time() - float(first[0][1])) if first else 0.0


class ResultsCollector(Collector):
    """The results stream's length and how far behind each of its consumer groups is
    (``evalfleet_results_group_*{group}``: group names are the platform's few consumers)."""

    def __init__(self, redis: Any) -> None:
        self.redis = redis

    def collect(self) -> Iterator[GaugeMetricFamily]:
        try:
            states = group_states(self.redis)
            length = float(self.redis.xlen(RESULTS_STREAM))
        except Exception:  # a scrape must not fail because Redis blipped
            return
        entries = GaugeMetricFamily("evalfleet_results_stream_entries",
                                    "Entries in the evalfleet:results stream (kept by age).")
        entries.add_metric([], length)
        yield entries
        yield from _group_families(states)


def _group_families(states: list[GroupState]) -> Iterator[GaugeMetricFamily]:
    lag = GaugeMetricFamily(
        "evalfleet_results_group_lag", "Results published and not yet delivered to the "
        "consumer group (including results that expired before it read them).", labels=["group"])
    pending = GaugeMetricFamily("evalfleet_results_group_pending", "Results delivered to the "
                                "consumer group and not yet acknowledged.", labels=["group"])
    behind = GaugeMetricFamily(
        "evalfleet_results_group_behind_seconds", "How long ago the oldest result not yet "
        "delivered to the consumer group was published (0: caught up).", labels=["group"])
    for state in states:
        if state.lag is not None:
            lag.add_metric([state.name], float(state.lag))
        pending.add_metric([state.name], float(state.pending))
        behind.add_metric([state.name], state.behind_s)
    yield from (lag, pending, behind)


class ContainerCollector(Collector):
    """Sandbox containers alive on this worker's engine (evalfleet-labelled)."""

    def __init__(self, docker_client: Any, worker_id: str) -> None:
        self.docker, self.worker_id = docker_client, worker_id

    def collect(self) -> Iterator[GaugeMetricFamily]:
        alive = GaugeMetricFamily("evalfleet_sandbox_containers_alive",
                                  "evalfleet sandbox containers on this worker's engine.")
        try:
            found = labelled(self.docker, [f"{LABEL_WORKER}={self.worker_id}"])
        except Exception:  # the engine being away is reported elsewhere
            return
        alive.add_metric([], float(len(found)))
        yield alive


class IsolationCollector(Collector):
    """``evalfleet_sandbox_isolation_info``: which runtime isolates each served profile;
    ``fallback="true"`` where ``auto`` could not use gVisor (alert on it)."""

    def __init__(self, isolations: Sequence[Any]) -> None:
        self.isolations = list(isolations)

    def collect(self) -> Iterator[GaugeMetricFamily]:
        info = GaugeMetricFamily(
            "evalfleet_sandbox_isolation_info",
            "The OCI runtime of each served profile's sandboxes (1 per profile).",
            labels=["profile", "runtime", "gvisor", "fallback"])
        for found in self.isolations:
            info.add_metric([found.profile, found.runtime, str(found.gvisor).lower(),
                             str(bool(found.fallback)).lower()], 1.0)
        yield info


class ReuseCollector(Collector):
    """``evalfleet_sandbox_reuse_info``: each served profile that asked to reuse its
    sandboxes, with the runs per sandbox it got (1 where its resets did not verify at the
    worker's start: ``verified="false"``, alert on it)."""

    def __init__(self, checks: Sequence[Any]) -> None:
        self.checks = list(checks)

    def collect(self) -> Iterator[GaugeMetricFamily]:
        info = GaugeMetricFamily(
            "evalfleet_sandbox_reuse_info",
            "Runs per sandbox of each served profile that asked to reuse its sandboxes "
            "(1 where the start-up probe found its resets unverifiable).",
            labels=["profile", "verified"])
        for found in self.checks:
            info.add_metric([found.profile, str(found.verified).lower()],
                            float(found.runs if found.verified else 1))
        yield info


class ActiveRunsCollector(Collector):
    """Runs executing on this worker node now, from the Celery main process's own state."""

    def collect(self) -> Iterator[GaugeMetricFamily]:
        from celery.worker import state

        active = GaugeMetricFamily("evalfleet_worker_runs_active",
                                   "Runs executing on this worker node.")
        active.add_metric([], float(sum(1 for r in state.active_requests if r.name == TASK_NAME)))
        yield active


def serving_registry(*live: Collector) -> CollectorRegistry:
    """The registry the main process serves: pool processes' files plus live collectors."""
    from prometheus_client import multiprocess

    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
    for collector in (ActiveRunsCollector(), *live):
        registry.register(collector)
    LAST_RUN_STARTED.set_to_current_time()  # a node that never started a run: since its start
    return registry
