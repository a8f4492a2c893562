"""Losing the Redis primary (issue 46): how long the fleet is without service.

A primary, a replica and three sentinels on loopback (:mod:`workers.devtools.sentinels`:
the primary is declared down after 1 s without an answer), one worker node of two processes
and a client, both through Sentinel. A probe run (sandbox-free) is submitted every 100 ms;
the primary is killed (SIGKILL). Reported per round, from the kill:

* **promoted**: until the sentinels name the replica the primary;
* **accepting**: until a submission succeeds again;
* **serving**: until the first run submitted after the kill is published (the time without
  service; target ≤ 10 s).

The baseline is the sentinels' own configured detection time (``down-after-milliseconds``).
"""

from __future__ import annotations

import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from bench.common import Report, Row
from evalfleet.tasks.platform import EvalfleetClient
from evalfleet.workers.devtools import sandbox_free
from evalfleet.workers.devtools.local_fleet import Starter
from evalfleet.workers.devtools.sentinels import DOWN_AFTER_MS, SentinelGroup

PROBE_EVERY_S = 0.1


class Prober:
    """Submits a probe run every 100 ms in a thread; remembers when each was taken."""

    def __init__(self, client: EvalfleetClient) -> None:
        self.client, self.taken = client, []  # type: list[tuple[float, str]]
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self.stopped.is_set():
            request = sandbox_free.request("probe")
            try:
                self.client.submit(request)
                self.taken.append((time.monotonic(), request["run_id"]))
            except Exception:  # no primary: the next probe tries again
                pass
            self.stopped.wait(PROBE_EVERY_S)

    def first_taken_after(self, moment: float) -> tuple[float, str]:
        return next((at, run_id) for at, run_id in self.taken if at > moment)


def one_round(workdir: Path) -> dict[str, float]:
    """Kill the primary once under probing; the three figures of the module, in seconds."""
    group = SentinelGroup(workdir).start()
    starter = Starter(group.url, workdir, retry_backoff_s="0.2", heartbeat_interval_s="0.5")
    client = EvalfleetClient(group.url)
    prober = Prober(client)
    try:
        starter("failover", args=["-c", "2"])
        prober.thread.start()
        time.sleep(2.0)
        killed_at = time.monotonic()
        old = group.kill_primary()
        promoted = group.wait_failover(old)
        return {"promoted": promoted, **_served(prober, client, killed_at)}
    finally:
        prober.stopped.set()
        client.close()
        starter.stop_all()
        group.stop()


def _served(prober: Prober, client: EvalfleetClient, killed_at: float) -> dict[str, float]:
    """When submissions were taken again, and when the first of them was published."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            taken_at, run_id = prober.first_taken_after(killed_at + 0.05)
            client.wait(run_id, timeout=60)
            return {"accepting": taken_at - killed_at,
                    "serving": time.monotonic() - killed_at}
        except StopIteration:
            time.sleep(0.05)
    raise TimeoutError("no submission was taken within 120 s of the kill")


def run(report: Report, rounds: int = 3) -> None:
    found: list[dict[str, Any]] = []
    for _ in range(rounds):
        with tempfile.TemporaryDirectory(prefix="evalfleet-failover-") as tmp:
            found.append(one_round(Path(tmp)))
    serving = statistics.median(r["serving"] for r in found)
    report.add(Row("Redis primary killed: time without service (median of "
                   f"{rounds}) vs the sentinels' detection time", serving,
                   DOWN_AFTER_MS / 1000, "s", "≤ 10 s", serving <= 10.0))
    lines = [f"| {i + 1} | {r['promoted']:.1f} | {r['accepting']:.1f} | {r['serving']:.1f} |"
             for i, r in enumerate(found)]
    report.section("Failover rounds (seconds from the kill of the primary):\n\n"
                   "| round | promoted | accepting | serving |\n| ---: | ---: | ---: | ---: |\n"
                   + "\n".join(lines) + "\n")
