"""Fair shares between tenants (issue 48, item 4): sandbox-free runs through one node of
two processes on a private Redis, every figure a ratio against a baseline of the same run.

* **cost of admission**: the fleet's own client drains N runs with no tenant (admission
  off: the forwarder sends them straight to the queue) against a tenant draining N (on:
  parked, then admitted); target: on within 10% of off (ratio ≥ 0.9).
* **a live tenant behind a backlog**: tenant B submits 50 runs, one every 20 ms (a live
  match), on an idle fleet (the baseline), then again while tenant A's N runs drain; B's
  p50 and p95 from submission to result at most 2× the idle ones, and A's drain rate at
  least 0.9 of A's alone.
* **weights 3:1**: A (weight 3) and B (weight 1) each submit 3,000 runs at once; among the
  first 2,000 published (both still waiting throughout), A's over B's within 10% of 3.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

from bench.common import Fleet, Report, Row, private_fleet
from evalfleet.tasks import tenancy
from evalfleet.tasks.platform import EvalfleetClient
from evalfleet.tasks.redis_keys import FLEET, Keyspace
from evalfleet.workers.devtools import sandbox_free
from evalfleet.workers.devtools.local_fleet import wait_until

LIVE_RUNS, LIVE_GAP_S = 50, 0.02


def published(redis: Any, keys: Keyspace) -> list[tuple[float, str]]:
    """(seconds, run id) of every result in ``keys``' results stream, in order."""
    return [(int(entry_id.split(b"-")[0]) / 1000, fields[b"run_id"].decode())
            for entry_id, fields in redis.xrange(keys.results_stream)]


def drained(redis: Any, keys: Keyspace, count: int, timeout_s: float = 900) -> float:
    """Once ``count`` results are in ``keys``' stream: the rate between the first and the
    last (runs/s)."""
    wait_until(lambda: redis.xlen(keys.results_stream) >= count, timeout_s,
               f"{count} results of {keys.tenant or 'the fleet'}")
    times = [t for t, _ in published(redis, keys)]
    return (len(times) - 1) / max(times[-1] - times[0], 1e-3)


def tenant(fleet: Fleet, name: str, **share: Any) -> tuple[Keyspace, EvalfleetClient]:
    """Tenant ``name`` with its ``share``, and its client (its own Redis user)."""
    made, password = tenancy.add(fleet.client.redis, [fleet.client.redis], name, **share)
    return made.keys, EvalfleetClient(f"redis://{made.user}:{password}@127.0.0.1:"
                                      f"{fleet.redis.port}/0")


def live(client: EvalfleetClient, keys: Keyspace, redis: Any) -> list[float]:
    """B's live match: 50 runs one every 20 ms; each one's seconds from its submission to
    its result."""
    sent = {}
    for _ in range(LIVE_RUNS):
        request = sandbox_free.request("live")
        sent[request["run_id"]] = time.time()
        client.submit(request)
        time.sleep(LIVE_GAP_S)
    wait_until(lambda: all(client.redis.exists(keys.result(r)) for r in sent), 300,
               "the live runs")
    return sorted(at - sent[run_id] for at, run_id in published(redis, keys) if run_id in sent)


def percentile(values: list[float], share: float) -> float:
    return values[min(len(values) - 1, int(share * len(values)))]


def node(fleet: Fleet) -> Any:
    return fleet.start("fair", args=["-c", "2"], concurrency="2")


def admission_cost(depth: int) -> tuple[float, float]:
    """Runs/s of the fleet's own drain without tenants, and of a tenant's."""
    rates = []
    for with_tenant in (False, True):
        with private_fleet() as fleet:
            keys, client = (tenant(fleet, "solo") if with_tenant
                            else (FLEET, fleet.client))
            client.submit_batch(sandbox_free.request("cost") for _ in range(depth))
            node(fleet)
            rates.append(drained(fleet.client.redis, keys, depth))
            if with_tenant:
                client.close()
    return rates[0], rates[1]


def behind_a_backlog(depth: int) -> dict[str, Any]:
    """B's latencies idle and behind A's backlog; A's rate alone and with B."""
    with private_fleet() as fleet:
        (a, a_client), (b, b_client) = tenant(fleet, "a"), tenant(fleet, "b")
        redis = fleet.client.redis
        node(fleet)
        live(b_client, b, redis)  # warm-up: the node's first runs are slower
        redis.delete(b.results_stream)
        idle = live(b_client, b, redis)
        a_client.submit_batch(sandbox_free.request("solo") for _ in range(depth))
        alone = drained(redis, a, depth)
        redis.delete(a.results_stream, b.results_stream)
        a_client.submit_batch(sandbox_free.request("busy") for _ in range(depth))
        wait_until(lambda: redis.xlen(a.results_stream) >= min(500, depth // 4), 300,
                   "A's drain under way")
        busy = live(b_client, b, redis)
        shared = drained(redis, a, depth)
        for client in (a_client, b_client):
            client.close()
    return {"idle": idle, "busy": busy, "alone": alone, "shared": shared}


def weighted(each: int) -> float:
    """A's runs over B's among the first ``2 * each / 3`` published, weights 3:1."""
    with private_fleet() as fleet:
        (a, a_client), (b, b_client) = tenant(fleet, "a", weight=3.0), tenant(fleet, "b")
        redis = fleet.client.redis
        for client in (a_client, b_client):
            client.submit_batch(sandbox_free.request("w") for _ in range(each))
        node(fleet)
        wait_until(lambda: redis.xlen(a.results_stream) + redis.xlen(b.results_stream)
                   >= each, 900, "the weighted drain")
        merged = sorted([(t, "a") for t, _ in published(redis, a)]
                        + [(t, "b") for t, _ in published(redis, b)])[:2 * each // 3]
        for client in (a_client, b_client):
            client.close()
    owners = [owner for _, owner in merged]
    return owners.count("a") / max(1, owners.count("b"))


def run(report: Report, quick: bool = False) -> None:
    depth, rounds = (2000, 1) if quick else (10_000, 1)
    off, on = zip(*(admission_cost(depth) for _ in range(rounds)), strict=True)
    report.add(Row(f"admission on (a tenant): drain of {depth:,}, 2 processes",
                   statistics.median(on), statistics.median(off), "runs/s", "≥ 0.9",
                   statistics.median(on) >= 0.9 * statistics.median(off)))
    found = behind_a_backlog(depth)
    for name, share in (("p50", 0.5), ("p95", 0.95)):
        busy, idle = percentile(found["busy"], share), percentile(found["idle"], share)
        report.add(Row(f"tenant B's live runs behind A's {depth:,}: {name} submission → "
                       f"result", busy * 1000, idle * 1000, "ms", "≤ 2", busy <= 2 * idle))
    report.add(Row("tenant A's drain rate while B's live runs are served", found["shared"],
                   found["alone"], "runs/s", "≥ 0.9", found["shared"] >= 0.9 * found["alone"]))
    ratio = weighted(3000 if not quick else 1200)
    report.add(Row("weights 3:1, both waiting: A's runs over B's", ratio, 3.0, "",
                   "within 10% of 3", 2.7 <= ratio <= 3.3))
