"""Sandbox reuse (issue 16, item 3): the trivial run through the whole fleet with reuse on
and off, on each runtime, against that runtime's own ``docker run``.

Series per runtime and mode (reuse off: a warm pool of one per process, a fresh sandbox per
run; reuse on: ``reuse_runs`` 10,000, one sandbox per process reset between runs):

* **sequential**: one run at a time, enqueue → scorecard;
* **staggered**: one run submitted every ``gap`` seconds, each waited for at the end;
* **burst**: ``burst`` runs submitted at once (pipelined: 1,000, or 100 with ``--quick``);
  throughput is runs / (first submission → last publication).

Each reports p50/p95/p99 (ms) and the success rate (runs scored as the trivial run must
be: a win). Baselines measured in the same run: ``docker run --rm`` (median, sequential)
and the parallel ``docker run`` ceiling on the same runtime. The sandbox's share of a
reused run is the plan (``timings_ms.sandbox``, median of the sequential series) plus the
reset between two runs under the same conditions (``evalfleet_sandbox_reset_seconds``:
its mean over the sequential series, the histogram keeps no median); the reset's mean
over every series, the burst's contention included, is reported beside it.
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass, field
from typing import Any

from bench.common import Fleet, Report, Row, docker_run, median, timed_ms, trivial_request
from bench.endtoend import docker_ceiling
from bench.scale import percentile
from evalfleet.tasks.redis_keys import RESULTS_STREAM

#: Runs one sandbox may serve with reuse on (more than any series submits).
REUSE_RUNS = 10_000
#: Worker processes of the node under test.
PROCESSES = 2


@dataclass
class Series:
    """One series' latencies (ms) and how many runs were scored as expected."""

    name: str
    latencies: list[float] = field(default_factory=list)
    ok: int = 0
    runs: int = 0
    rate: float = 0.0
    """Runs/s (burst only)."""

    def line(self, mode: str) -> str:
        values = self.latencies or [float("nan")]
        rate = f"{self.rate:,.1f}" if self.rate else ""
        return (f"| {mode} | {self.name} | {self.runs} | {percentile(values, 50):,.1f} | "
                f"{percentile(values, 95):,.1f} | {percentile(values, 99):,.1f} | "
                f"{self.ok / max(1, self.runs):.1%} | {rate} |")


def _won(result: Any) -> bool:
    return bool(result.outcome == "scored" and result.scorecard
                and result.scorecard.result == "win")


def sequential(fleet: Fleet, runs: int) -> tuple[Series, list[Any]]:
    found, results = Series("sequential", runs=runs), []
    for _ in range(runs):
        request = trivial_request("seq")
        started = time.perf_counter()
        fleet.client.submit(request)
        result = fleet.client.wait(request["run_id"], timeout=120)
        found.latencies.append((time.perf_counter() - started) * 1000)
        found.ok += _won(result)
        results.append(result)
    return found, results


def staggered(fleet: Fleet, runs: int, gap: float) -> Series:
    """A run every ``gap`` s; latency = its publication (stream entry) − its submission."""
    found = Series(f"staggered ({gap * 1000:.0f} ms apart)", runs=runs)
    submitted: dict[str, float] = {}
    for _ in range(runs):
        request = trivial_request("stag")
        submitted[request["run_id"]] = time.time()
        fleet.client.submit(request)
        time.sleep(gap)
    _collect(fleet, found, submitted)
    return found


def burst(fleet: Fleet, runs: int) -> Series:
    found = Series(f"burst ({runs} at once)", runs=runs)
    requests = [trivial_request("burst") for _ in range(runs)]
    started = time.time()
    fleet.client.submit_batch(requests)
    last = _collect(fleet, found, {r["run_id"]: started for r in requests})
    found.rate = runs / max(1e-3, last - started)
    return found


def _collect(fleet: Fleet, found: Series, submitted: dict[str, float]) -> float:
    """Wait for every run of ``submitted``; fill ``found`` (latency: its stream entry's
    time − its submission); the last publication (epoch s)."""
    for run_id in submitted:
        found.ok += _won(fleet.client.wait(run_id, timeout=900))
    published = {fields[b"run_id"].decode(): int(entry_id.split(b"-")[0]) / 1000
                 for entry_id, fields in fleet.client.redis.xrange(RESULTS_STREAM, "-", "+")}
    done = [published[run_id] for run_id in submitted]
    found.latencies = [(end - at) * 1000 for end, at in zip(done, submitted.values(),
                                                            strict=True)]
    return max(done)


def reset_totals(metrics: str) -> tuple[float, float]:
    """Verified resets so far in a node's exposition: (seconds in all, how many)."""
    total = count = 0.0
    for line in metrics.splitlines():
        if 'verified="true"' not in line:
            continue
        if line.startswith("evalfleet_sandbox_reset_seconds_sum{"):
            total += float(line.rsplit(" ", 1)[1])
        elif line.startswith("evalfleet_sandbox_reset_seconds_count{"):
            count += float(line.rsplit(" ", 1)[1])
    return total, count


def reset_mean_ms(before: tuple[float, float], after: tuple[float, float]) -> float:
    """Mean verified reset (ms) between two :func:`reset_totals`."""
    count = after[1] - before[1]
    return (after[0] - before[0]) / count * 1000 if count else float("nan")


#: Seconds left after a series for the reset after its last run to be counted.
RESET_SETTLE_S = 0.5


@dataclass
class Mode:
    """What one (runtime, reuse on/off) node measured."""

    series: list[Series]
    plan_ms: float
    """Median plan of the sequential series."""
    reset_ms: float = float("nan")
    """Mean verified reset in the sequential series (the plan's conditions)."""
    reset_all_ms: float = float("nan")
    """Mean verified reset over every series (the burst's contention included)."""


def measure(fleet: Fleet, runtime: str, reuse: bool, sizes: tuple[int, int, int]) -> Mode:
    """Every series on a node of :data:`PROCESSES` with reuse on or off."""
    runs, stagger_runs, burst_runs = sizes
    node = fleet.node(f"reuse-{'on' if reuse else 'off'}-{runtime}", processes=PROCESSES,
                      pool_size=1, runtime=runtime, reuse_runs=REUSE_RUNS if reuse else 1)
    try:
        fleet.run_batch(PROCESSES * 2)  # warm every process
        time.sleep(RESET_SETTLE_S)
        start = reset_totals(node.metrics())
        seq, results = sequential(fleet, runs)
        time.sleep(RESET_SETTLE_S)
        after_seq = reset_totals(node.metrics())
        series = [seq, staggered(fleet, stagger_runs, 0.05), burst(fleet, burst_runs)]
        time.sleep(RESET_SETTLE_S)
        end = reset_totals(node.metrics())
        plan = median([r.timings_ms.get("sandbox", float("nan")) for r in results])
    finally:
        fleet.stop(node)
    return Mode(series, plan, reset_mean_ms(start, after_seq), reset_mean_ms(start, end))


def run(fleet: Fleet, report: Report, runtimes: list[str], quick: bool = False) -> None:
    """Reuse on and off on each runtime, each against that runtime's ``docker run``."""
    sizes = (20, 40, 100) if quick else (100, 200, 1000)
    for runtime in runtimes:
        base = [timed_ms(functools.partial(docker_run, runtime=runtime)) for _ in range(10)]
        ceiling = docker_ceiling(5 if quick else 10, 4, runtime)
        modes = {reuse: measure(fleet, runtime, reuse, sizes) for reuse in (False, True)}
        lines = ["| reuse | series | runs | p50 ms | p95 ms | p99 ms | success | runs/s |",
                 "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
        for reuse, mode in modes.items():
            lines += [s.line("on" if reuse else "off") for s in mode.series]
        report.section(
            f"Sandbox reuse on {runtime} ({PROCESSES} worker processes; `docker run --rm` "
            f"median {median(base):.0f} ms, parallel ceiling (4 loops) {ceiling:.2f}/s; "
            f"plan median: off {modes[False].plan_ms:.1f} ms, on {modes[True].plan_ms:.1f} "
            f"ms; mean verified reset: sequential {modes[True].reset_ms:.1f} ms, every "
            f"series {modes[True].reset_all_ms:.1f} ms):\n\n"
            + "\n".join(lines) + "\n")
        on, off = modes[True].series, modes[False].series
        _row(report, f"reuse on, burst throughput on {runtime} vs parallel `docker run`",
             on[2].rate, ceiling, "runs/s", "≥ 10", lambda r: r >= 10)
        _row(report, f"reuse off, burst throughput on {runtime} vs parallel `docker run`",
             off[2].rate, ceiling, "runs/s", "≥ 0.8", lambda r: r >= 0.8)
        _row(report, f"reuse on, warm run overhead on {runtime} (sequential p50)",
             percentile(on[0].latencies, 50), median(base), "ms", "≤ 0.05",
             lambda r: r <= 0.05)
        share = modes[True].plan_ms + modes[True].reset_ms
        _row(report, f"reuse on, sandbox share of a sequential run on {runtime} "
             "(plan + reset) vs 5 ms",
             share, 5.0, "ms", "≤ 1.0", lambda r: r <= 1.0)


def _row(report: Report, case: str, ours: float, base: float, unit: str, target: str,
         met: Any) -> None:
    row = Row(case, ours, base, unit, target, False)
    row.met = bool(met(row.ratio))
    report.add(row)
