"""Soak: N runs across 4 worker processes — N scorecards, no duplicates, no leaked
containers, bounded worker memory. 200 runs in CI; 1,000 with ``bash scripts/soak.sh``.

Set ``EVALFLEET_SOAK_REPORT=path.json`` to keep the throughput and latency figures.
"""

from __future__ import annotations

import json
import os
import statistics
import time
from pathlib import Path
from typing import Any

import pytest
from fleet_support import PrivateFleet, children, run_request, wait_for

from evalfleet.tasks.redis_keys import RESULTS_STREAM, deliveries_key

#: Growth of a node's resident memory (main + pool processes) allowed over a soak.
MAX_RSS_GROWTH_MB = 150


def rss_mb(pid: int) -> float:
    """Resident memory of ``pid`` and its children, in MiB."""
    total = 0
    for one in [pid, *children(pid)]:
        try:
            for line in Path(f"/proc/{one}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except FileNotFoundError:
            continue
    return total / 1024


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def soak(private_fleet: PrivateFleet, runs: int) -> dict[str, Any]:
    nodes = [private_fleet.start("soak", ["-c", "2"]) for _ in range(2)]  # 4 processes
    client = private_fleet.client()
    warm = [run_request("warmup") for _ in range(4)]
    client.submit_many(warm)
    for request in warm:
        client.wait(request.run_id, timeout=120)
    rss_before = [rss_mb(n.process.pid) for n in nodes]  # type: ignore[union-attr]
    requests = [run_request("soak", "echo hi" if i % 2 else "echo no") for i in range(runs)]
    ids = {r.run_id for r in requests}
    submitted = time.time()
    client.submit_many(requests)

    results = [client.wait(r.run_id, timeout=60 + runs) for r in requests]

    published = {}
    for entry_id, fields in client.redis.xrange(RESULTS_STREAM):
        run_id = fields[b"run_id"].decode()
        if run_id in ids:
            assert run_id not in published, f"{run_id} published twice"
            published[run_id] = int(entry_id.split(b"-")[0]) / 1000
    rss_after = [rss_mb(n.process.pid) for n in nodes]  # type: ignore[union-attr]
    redelivered = sum(int(client.redis.get(deliveries_key(i)) or 1) > 1 for i in ids)
    for node in nodes:
        node.stop()
    leaked = private_fleet.containers()
    end_to_end = [(t - submitted) * 1000 for t in published.values()]
    run_ms = [r.timings_ms.get("total", 0.0) for r in results]
    elapsed = max(published.values()) - submitted
    report = {
        "runs": runs, "processes": 4, "scorecards": sum(r.scorecard is not None for r in results),
        "duplicates": runs - len(published), "redelivered": redelivered,
        "leaked_containers": len(leaked), "elapsed_s": round(elapsed, 1),
        "throughput_runs_per_s": round(runs / elapsed, 2),
        "run_ms": {f"p{q}": round(percentile(run_ms, q)) for q in (50, 95, 99)},
        "submit_to_publish_ms": {f"p{q}": round(percentile(end_to_end, q))
                                 for q in (50, 95, 99)},
        "run_ms_mean": round(statistics.fmean(run_ms)),
        "rss_mb_before": [round(x) for x in rss_before],
        "rss_mb_after": [round(x) for x in rss_after],
    }
    if os.environ.get("EVALFLEET_SOAK_REPORT"):
        Path(os.environ["EVALFLEET_SOAK_REPORT"]).write_text(json.dumps(report, indent=2))
    print(json.dumps(report))

    assert [r.outcome for r in results] == ["scored"] * runs
    assert [r.scorecard.result for r in results if r.scorecard] == ["loss", "win"] * (runs // 2)
    assert len(published) == runs and report["duplicates"] == 0
    assert not leaked
    assert all(after - before < MAX_RSS_GROWTH_MB
               for before, after in zip(rss_before, rss_after, strict=True)), report
    return report


@pytest.mark.slow  # CI runs it after the README test command (scripts/ci-soak.sh)
def test_soak_200_runs_across_4_processes(private_fleet: PrivateFleet) -> None:
    """The CI soak: 200 runs, every one published once, nothing leaked, memory bounded."""
    soak(private_fleet, 200)


@pytest.mark.slow
def test_soak_1000_runs_across_4_processes(private_fleet: PrivateFleet) -> None:
    """The full soak (``bash scripts/soak.sh``): 1,000 runs."""
    soak(private_fleet, 1000)


def test_leak_check_sees_the_fleet(private_fleet: PrivateFleet) -> None:
    """The teardown leak check is not vacuous: it sees this fleet's sandboxes."""
    node = private_fleet.start("seen")
    client = private_fleet.client()
    request = run_request("seen", "sleep 3; echo hi")
    client.submit(request)
    wait_for(lambda: private_fleet.containers(**{"evalfleet.worker": node.worker_id}), 30,
             "no sandbox of this fleet was seen")
    client.wait(request.run_id, timeout=60)
