"""The scale model of the queue layer (issue 16, item 4): sandbox-free runs through the
whole fleet, against a bare Celery no-op task through the same broker.

A sandbox-free run is a pack that scores only the submitted events (no file, command, test
or capture): the worker acquires no sandbox for it (``Plan.executes_nothing``), so what is
measured is the queue layer — Celery, the pipeline's parsing and scoring, publication.

* **drain rate**: ``depth`` runs are queued while no worker runs (1,000 for 1, 2 and 4
  processes; then 10,000 and 100,000 for 2, or 2,000 with ``--quick``); then a node with
  ``processes`` pool processes starts and drains them. The rate is counted between the
  first and the last publication (the stream entries' ids are Redis's clock), so the
  node's start is not in it. The baseline is the same for a bare Celery no-op task (Redis
  result backend, Celery's defaults; ``date_done`` of its results), same depth, same
  number of prefork processes.
* **latency**: a node already running; ``burst`` runs submitted at once (pipelined), and
  ``sequential`` runs one at a time (submit → published). Percentiles of submit → the
  result's stream entry.
* **client submission**: ``submit_batch`` (pipelined into the intake stream, 500 per round
  trip) runs/s (:mod:`bench.submission` compares it with the Celery send path).
* **Redis memory**: ``used_memory`` before and after queueing (per queued run), and after
  the drain (per published result: its key and its stream entry, its status record, the
  queue empty again).
* **Redis commands per run**, from submission to publication, and their split by command
  (``INFO commandstats``; the commands a script calls are counted by name, so a script's
  own share shows against a commit without it).
* **the status record** (issue 41): ``MEMORY USAGE`` of a finished run's record, without a
  match and with one, and of the match's index per run (a match of 2 runs, and of many).
"""

from __future__ import annotations

import functools
import json
import statistics
import tempfile
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import redis

from bench.common import Fleet, Report, Row
from bench.dispatch import stop, worker
from bench.dispatch_worker import BARE_TASK, bare_app
from evalfleet.tasks.messages import RunRequest
from evalfleet.tasks.redis_keys import INTAKE_STREAM, RESULTS_STREAM
from evalfleet.workers.devtools import sandbox_free
from evalfleet.workers.devtools.local_fleet import RedisServer, free_port, wait_until


def percentile(values: list[float], q: float) -> float:
    """The ``q``-th percentile (nearest rank) of ``values``."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered) + 0.5) - 1))]


def used_memory(client: Any) -> int:
    return int(client.info("memory")["used_memory"])


#: The status record's and the match index's keys (``tasks.redis_keys``), written out so
#: that this bench also runs on a commit from before the record, to compare with it.
STATUS_KEY, MATCH_KEY = "evalfleet:status:{}", "evalfleet:match:{}"


def commands_served(client: Any) -> Counter[str]:
    """Commands Redis has executed, by name (``INFO commandstats``; those a script calls
    included)."""
    return Counter({name.removeprefix("cmdstat_"): int(stats["calls"])
                    for name, stats in client.info("commandstats").items()})


@dataclass
class Drain:
    """One drain: how fast, and what Redis held."""

    rate: float
    queued_bytes: float
    """``used_memory`` growth per queued run."""
    published_bytes: float = 0.0
    """``used_memory`` growth per published result (key + stream entry), queue empty."""
    by_command: dict[str, float] = field(default_factory=dict)
    """Redis commands per run by name, from submission to publication (the node's own
    included)."""

    @property
    def commands(self) -> float:
        return sum(self.by_command.values())


def published_since(client: Any, last_id: bytes | str) -> list[tuple[bytes, dict[bytes, bytes]]]:
    """Stream entries after ``last_id``."""
    found: list[Any] = []
    start = f"({last_id.decode() if isinstance(last_id, bytes) else last_id}"
    while True:
        page = client.xrange(RESULTS_STREAM, min=start, max="+", count=10_000)
        if not page:
            return found
        found.extend(page)
        start = f"({page[-1][0].decode()}"


def stream_ms(entry_id: bytes) -> int:
    return int(entry_id.split(b"-")[0])


def last_entry(client: Any) -> bytes:
    newest = client.xrevrange(RESULTS_STREAM, count=1)
    return newest[0][0] if newest else b"0-0"


def evalfleet_drain(fleet: Fleet, processes: int, depth: int, timeout: float, *,
                    no_op: bool = False) -> Drain:
    """Queue ``depth`` sandbox-free runs, then drain them with a node of ``processes``
    (``no_op``: evalfleet's Celery app and task with the pipeline replaced by a no-op,
    :mod:`bench.dispatch_worker`, to split the queue layer's cost from the run's)."""
    client = fleet.client.redis
    since, goal = last_entry(client), client.xlen(RESULTS_STREAM) + depth
    before, served = used_memory(client), commands_served(client)
    fleet.client.submit_batch(sandbox_free.request() for _ in range(depth))
    queued = used_memory(client)
    if no_op:
        process = worker("evalfleet", fleet.redis.url, fleet.workdir / "noop.log", processes)
        stop_it = functools.partial(stop, process)
    else:
        node = fleet.node(f"scale{processes}", processes=processes)
        stop_it = functools.partial(fleet.stop, node)
    try:
        wait_until(lambda: client.xlen(RESULTS_STREAM) >= goal, timeout,
                   f"{depth} sandbox-free runs")
    finally:
        stop_it()
    entries = published_since(client, since)
    expected = (b"rejected", b"") if no_op else (b"scored", b"win")
    if outcomes(entries, expected) != depth:
        raise RuntimeError(f"only {outcomes(entries, expected)} of {depth} sandbox-free runs "
                           f"ended {expected}")
    span_s = (stream_ms(entries[-1][0]) - stream_ms(entries[0][0])) / 1000
    return Drain(rate=(len(entries) - 1) / max(span_s, 1e-3),
                 queued_bytes=(queued - before) / depth,
                 published_bytes=(used_memory(client) - before) / depth,
                 by_command={name: calls / depth for name, calls
                             in (commands_served(client) - served).items()})


def outcomes(entries: list[Any], expected: tuple[bytes, bytes]) -> int:
    """Entries whose (outcome, scorecard result) is ``expected``."""
    return sum(1 for _, fields in entries
               if (fields[b"outcome"], fields[b"scorecard_result"]) == expected)


def wins(entries: list[Any]) -> int:
    """Entries of runs scored a win (the only outcome the bench's run can have)."""
    return outcomes(entries, (b"scored", b"win"))


def bare_drain(workdir: Path, redis_url: str, processes: int, depth: int,
               timeout: float) -> Drain:
    """Queue ``depth`` bare no-op tasks, then drain them with ``processes`` prefork
    processes; the rate between the first and the last ``date_done``."""
    app = bare_app(redis_url)
    client = redis.Redis.from_url(redis_url)
    before = used_memory(client)
    ids = [uuid.uuid4().hex for _ in range(depth)]
    with app.producer_or_acquire() as producer, producer.batch(max_size=501):
        for task_id in ids:
            app.send_task(BARE_TASK, task_id=task_id, producer=producer)
    queued = used_memory(client)
    keys = [f"celery-task-meta-{task_id}" for task_id in ids]
    process = worker("bare", redis_url, workdir / f"bare{processes}-{depth}.log", processes)
    try:
        wait_until(lambda: client.exists(*keys) == depth, timeout, f"{depth} bare tasks")
    finally:
        stop(process)
    done = []
    for start in range(0, depth, 1000):
        for raw in client.mget(keys[start:start + 1000]):
            if not isinstance(raw, bytes):
                raise RuntimeError("a bare task's result is missing")
            done.append(datetime.fromisoformat(json.loads(raw)["date_done"]).timestamp())
    client.delete(*keys)
    client.close()
    return Drain(rate=(depth - 1) / max(max(done) - min(done), 1e-3),
                 queued_bytes=(queued - before) / depth)


def latencies(fleet: Fleet, burst: int, sequential: int) -> dict[str, list[float]]:
    """Submit → published (ms) of a pipelined burst and of one-at-a-time runs, on a
    running node of two processes."""
    client = fleet.client.redis
    node = fleet.node("scale-latency", processes=2)
    found: dict[str, list[float]] = {}
    try:
        fleet.client.wait(fleet.client.submit(sandbox_free.request("warm")), timeout=60)
        since, goal = last_entry(client), client.xlen(RESULTS_STREAM) + burst
        requests = [sandbox_free.request("burst") for _ in range(burst)]
        submitted = time.time()
        fleet.client.submit_batch(requests)
        wait_until(lambda: client.xlen(RESULTS_STREAM) >= goal, 600, "the burst")
        entries = published_since(client, since)
        found["burst"] = [stream_ms(e[0]) - submitted * 1000 for e in entries]
        if wins(entries) != burst:
            raise RuntimeError(f"only {wins(entries)} of {burst} burst runs scored wins")
        one_by_one = []
        for _ in range(sequential):
            request = sandbox_free.request("seq")
            started = time.perf_counter()
            fleet.client.submit(request)
            result = fleet.client.wait(request["run_id"], timeout=60)
            one_by_one.append((time.perf_counter() - started) * 1000)
            if result.scorecard is None or result.scorecard.result != "win":
                raise RuntimeError(f"a sequential run was not scored a win: {result.reason}")
        found["sequential"] = one_by_one
    finally:
        fleet.stop(node)
    return found


def submission(fleet: Fleet, count: int) -> float:
    """Runs/s of ``submit_batch`` (``count`` runs; the intake and the queue emptied after:
    no node runs)."""
    requests = [sandbox_free.request("submit") for _ in range(count)]
    started = time.perf_counter()
    fleet.client.submit_batch(requests)
    found = count / (time.perf_counter() - started)
    fleet.client.redis.xtrim(INTAKE_STREAM, maxlen=0)
    for key in fleet.client.redis.keys("evalfleet.default*"):
        fleet.client.redis.delete(key)
    return found


def result_sizes(fleet: Fleet, sample: int = 50) -> tuple[float, float]:
    """Mean ``MEMORY USAGE`` of a published result key, and of the stream per entry."""
    client = fleet.client.redis
    keys = [k for _, k in zip(range(sample), client.scan_iter("evalfleet:result:*",
                                                                count=1000), strict=False)]
    per_key = statistics.mean(client.memory_usage(k, samples=0) for k in keys)
    per_entry = client.memory_usage(RESULTS_STREAM, samples=0) / max(1, client.xlen(
        RESULTS_STREAM))
    return per_key, per_entry


@dataclass
class StatusSizes:
    """``MEMORY USAGE`` (bytes) of finished runs' status records and of a match's index."""

    plain: float
    """A record without a match (mean)."""
    matched: float
    """A record with a match (mean)."""
    index: dict[int, float]
    """A match's index per run, by the match's number of runs."""


def status_sizes(fleet: Fleet, runs: int) -> StatusSizes | None:
    """Sandbox-free runs on a node of 2 processes: ``runs`` without a match, a match of 2
    and a match of ``runs``; ``None`` on a commit without the status record."""
    if "match" not in RunRequest.model_fields:
        return None
    plain = [sandbox_free.request("plain") for _ in range(runs)]
    matches = {size: _matched(size) for size in (2, runs)}
    every = plain + [r for requests in matches.values() for r in requests]
    node = fleet.node("scale-status", processes=2)
    try:
        fleet.client.submit_batch(every)
        for request in every:
            fleet.client.wait(request["run_id"], timeout=120)
    finally:
        fleet.stop(node)
    client = fleet.client.redis
    index = {size: usage(client, MATCH_KEY.format(requests[0]["match"])) / size
             for size, requests in matches.items()}
    return StatusSizes(_record_usage(client, plain), _record_usage(client, matches[runs]),
                       index)


def _matched(runs: int) -> list[dict[str, Any]]:
    match = f"scale-{uuid.uuid4().hex[:12]}"
    return [{**sandbox_free.request("match"), "match": match} for _ in range(runs)]


def _record_usage(client: Any, requests: list[dict[str, Any]]) -> float:
    return statistics.mean(usage(client, STATUS_KEY.format(r["run_id"])) for r in requests)


def usage(client: Any, key: str) -> int:
    """``MEMORY USAGE`` of ``key`` (every element counted).

    Raises:
        RuntimeError: there is no such key.
    """
    found = client.memory_usage(key, samples=0)
    if found is None:
        raise RuntimeError(f"no {key} in Redis")
    return int(found)


def run(fleet: Fleet, report: Report, quick: bool = False) -> None:
    """Every scale case on ``fleet`` (its own Redis); see the module docstring."""
    depth = 1000
    deeps = (2000,) if quick else (10_000, 100_000)
    deep = deeps[-1]
    processes = (1, 2, 4)
    lines = ["| worker processes | queued | evalfleet runs/s | evalfleet, no-op pipeline/s "
             "| bare Celery no-op/s | ratio (evalfleet / bare) |",
             "| ---: | ---: | ---: | ---: | ---: | ---: |"]
    drains: dict[tuple[int, int], Drain] = {}
    bares: dict[tuple[int, int], Drain] = {}
    with tempfile.TemporaryDirectory(prefix="evalfleet-scale-") as tmp:
        bare_redis = RedisServer(free_port(), Path(tmp)).start()
        try:
            for count, size in [(p, depth) for p in processes] + [(2, d) for d in deeps]:
                bares[count, size] = bare_drain(Path(tmp), bare_redis.url, count, size, 900)
                drains[count, size] = evalfleet_drain(fleet, count, size, 1800)
                no_op = evalfleet_drain(fleet, count, size, 1800, no_op=True).rate
                ours, base = drains[count, size].rate, bares[count, size].rate
                lines.append(f"| {count} | {size:,} | {ours:,.0f} | {no_op:,.0f} | "
                             f"{base:,.0f} | {ours / base:.2f} |")
        finally:
            bare_redis.stop()
    report.section("Sandbox-free runs drained from a backlog (rate between the first and "
                   "the last publication; bare Celery: a no-op task, Redis result backend, "
                   "the same prefork processes):\n\n" + "\n".join(lines) + "\n")
    # the pair with the median ratio (not the best: each pair is noisy on a shared machine)
    ratios = sorted(drains, key=lambda k: drains[k].rate / bares[k].rate)
    middle = ratios[(len(ratios) - 1) // 2]
    row = Row(f"sandbox-free runs vs bare Celery no-op (median pair: {middle[0]} processes, "
              f"{middle[1]:,} queued)", drains[middle].rate, bares[middle].rate, "runs/s",
              "≥ 0.5", False)
    row.met = row.ratio >= 0.5
    report.add(row)
    _latency_section(report, latencies(fleet, 200 if quick else 1000, 20 if quick else 100))
    batch = submission(fleet, 2000 if quick else 10_000)
    row = Row("client submission, pipelined (`submit_batch`) vs the target", batch, 2000,
              "runs/s", "≥ 1.0", False)
    row.met = row.ratio >= 1.0
    report.add(row)
    per_key, per_entry = result_sizes(fleet)
    deep_drain = drains[2, deep]
    report.section(
        f"Redis memory (`used_memory` deltas, {deep:,} runs): "
        f"{deep_drain.queued_bytes:,.0f} B per queued run (bare Celery no-op: "
        f"{bares[2, deep].queued_bytes:,.0f} B), {deep_drain.published_bytes:,.0f} B per "
        f"published result once drained; `MEMORY USAGE`: result key {per_key:,.0f} B, "
        f"stream {per_entry:,.0f} B per entry. Redis commands per run, submission to "
        f"publication (`INFO commandstats`, the node's own included): "
        f"{deep_drain.commands:,.1f}: {split(deep_drain.by_command)}.\n")
    _status_section(report, status_sizes(fleet, 200 if quick else 1000))


def split(by_command: dict[str, float]) -> str:
    """Commands per run by name, the most first (those under 0.05 per run left out)."""
    ordered = sorted(by_command.items(), key=lambda item: (-item[1], item[0]))
    return ", ".join(f"`{name.upper()}` {calls:.2f}" for name, calls in ordered
                     if calls >= 0.05)


def _status_section(report: Report, sizes: StatusSizes | None) -> None:
    if sizes is None:
        report.section("Status record: none on this commit.\n")
        return
    index = ", ".join(f"{per_run:,.0f} B per run in a match of {size:,}"
                      for size, per_run in sizes.index.items())
    report.section(f"Status record (`MEMORY USAGE` of a finished run's "
                   f"`evalfleet:status:<id>`): {sizes.plain:,.0f} B without a match, "
                   f"{sizes.matched:,.0f} B with one; the match's index "
                   f"(`evalfleet:match:<match>`): {index}.\n")


def _latency_section(report: Report, found: dict[str, list[float]]) -> None:
    lines = ["| series | runs | p50 ms | p95 ms | p99 ms | scored wins |",
             "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for name, values in found.items():
        lines.append(f"| {name} | {len(values)} | {percentile(values, 50):,.1f} | "
                     f"{percentile(values, 95):,.1f} | {percentile(values, 99):,.1f} | "
                     f"{len(values)}/{len(values)} |")
    report.section("Submit → published, sandbox-free runs, one node of 2 processes "
                   "(burst: submitted at once, pipelined):\n\n" + "\n".join(lines) + "\n")
