"""End-to-end cases through real worker processes: cold and warm run overhead, where the
time goes, throughput against parallel ``docker run`` and worker memory after many runs.

Each case starts its own worker nodes against a private Redis (``bench.common``); the
``docker run --rm --network none`` baseline is measured in the same process, interleaved
with the runs it is compared to, so drift hits both alike.
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from typing import Any

from bench.common import (
    Fleet,
    Report,
    Row,
    children,
    docker_run,
    median,
    rss_kib,
    timed_ms,
)

#: Phases of ``RunResult.timings_ms`` in the order a run goes through them.
PHASES = ("queue_wait", "sandbox_acquire", "sandbox", "commands", "code_execution",
          "seed_and_capture", "scoring", "total", "publish")


def overhead(fleet: Fleet, report: Report, runs: int, *, warm: bool,
             runtime: str = "runc") -> list[Any]:
    """Enqueue → scorecard of the trivial run on ``runtime``, next to ``docker run`` on the
    same runtime (interleaved)."""
    node = fleet.node("warm" if warm else "cold", pool_size=2 if warm else 0, runtime=runtime)
    try:
        fleet.run_one()  # first run pays imports and connections
        ours, base, results = [], [], []
        for _ in range(runs):
            base.append(timed_ms(lambda: docker_run(runtime=runtime)))
            if warm:
                time.sleep(0.6)  # let the pool refill outside the timed path, as idle time would
            elapsed, result = fleet.run_one()
            ours.append(elapsed)
            results.append(result)
    finally:
        fleet.stop(node)
    name, limit = ("warm", 0.3) if warm else ("cold", 1.1)
    row = Row(f"{name} run overhead on {runtime} (enqueue → scorecard, pool "
              f"{'on' if warm else 'off'})", median(ours), median(base), "ms", f"≤ {limit}",
              False)
    row.met = row.ratio <= limit
    report.add(row)
    return results


def phases(report: Report, label: str, results: list[Any]) -> None:
    """Median of each ``timings_ms`` phase over ``results``."""
    values: dict[str, list[float]] = defaultdict(list)
    for result in results:
        for phase, ms in result.timings_ms.items():
            values[phase].append(ms)
    known = [p for p in PHASES if p in values] + sorted(set(values) - set(PHASES))
    lines = [f"Where the time goes ({label}, median ms of {len(results)} runs, from "
             "`RunResult.timings_ms`):", "", "| phase | ms |", "| --- | ---: |"]
    lines += [f"| {p} | {median(values[p]):.1f} |" for p in known]
    report.section("\n".join(lines) + "\n")


def docker_ceiling(seconds: float, parallel: int, runtime: str = "runc") -> float:
    """``docker run --rm`` on ``runtime`` per second with ``parallel`` loops at once."""
    done = [0] * parallel
    stop = time.monotonic() + seconds

    def loop(slot: int) -> None:
        while time.monotonic() < stop:
            docker_run(runtime=runtime)
            done[slot] += 1

    threads = [threading.Thread(target=loop, args=(i,)) for i in range(parallel)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sum(done) / (time.monotonic() - started)


def throughput(fleet: Fleet, report: Report, runs: int, seconds: float,
               processes: tuple[int, ...] = (1, 2, 4), runtime: str = "runc") -> None:
    """Trivial runs/s through the fleet on ``runtime`` for each process count, against
    the same runtime's parallel ``docker run`` ceiling."""
    ceilings = {p: docker_ceiling(seconds, p, runtime) for p in (2, 4, 8)}
    ceiling = max(ceilings.values())
    report.section(f"Parallel `docker run --rm --network none --runtime {runtime}` ceiling: "
                   + ", ".join(f"{p} at once {r:.2f}/s" for p, r in ceilings.items())
                   + f" → ceiling {ceiling:.2f}/s\n")
    best = 0.0
    lines = ["| worker processes | runs/s | ratio to ceiling |", "| ---: | ---: | ---: |"]
    for count in processes:
        node = fleet.node(f"tp{count}", processes=count, pool_size=1, runtime=runtime)
        try:
            fleet.run_batch(count * 2)  # warm up every process
            elapsed, _ = fleet.run_batch(runs)
        finally:
            fleet.stop(node)
        rate = runs / elapsed
        best = max(best, rate)
        lines.append(f"| {count} | {rate:.2f} | {rate / ceiling:.2f} |")
    report.section(f"Throughput on {runtime} by worker processes (one node, warm pool of 1 "
                   f"per process, {runs} trivial runs submitted at once):\n\n"
                   + "\n".join(lines) + "\n")
    row = Row(f"throughput on {runtime} (best of 1/2/4 processes)", best, ceiling, "runs/s",
              "≥ 0.8", False)
    row.met = row.ratio >= 0.8
    report.add(row)


def memory(fleet: Fleet, report: Report, total: int, batch: int = 50) -> None:
    """RSS of the process that runs the runs, after 10 runs and after ``total`` (runc)."""
    node = fleet.node("mem", processes=1, pool_size=1)
    try:
        assert node.process is not None
        child = children(node.process.pid)[0]
        fleet.run_batch(10)
        after_ten = rss_kib(child)
        done = 10
        while done < total:
            step = min(batch, total - done)
            fleet.run_batch(step)
            done += step
        after_all = rss_kib(child)
    finally:
        fleet.stop(node)
    row = Row(f"worker RSS after {total} runs vs after 10", after_all / 1024, after_ten / 1024,
              "MiB", "≤ 1.2", False)
    row.met = row.ratio <= 1.2
    report.add(row)
