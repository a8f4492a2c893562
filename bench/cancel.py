"""Cancel (issue 41, item 7): the time from ``client.cancel`` to the end of the run's sandbox.

On each runtime the engine offers (of ``--runtimes``), one worker node of one process, pool
off (each run's container is created for it and labelled with its run id). Each run's one
command loops forever (``while true; do sleep 0.1; done``). Once its container runs (and
:data:`SETTLE_S` more, so the command is under way), the bench calls ``client.cancel`` and
polls the engine every :data:`POLL_S` for the container, by its run-id label:

* **stopped**: the container is no longer ``running`` (or already gone);
* **gone**: the engine lists it no more (removed).

The baseline, interleaved with the runs in the same process: an equivalent idle container
(same image and runtime, the same loop, ``--network none``) removed directly with
``remove(force=True)`` — the engine's own floor for ending a running container. Also timed:
``client.cancel()`` itself (its Redis round trips). Target: gone within 2 s at p95.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import docker

from bench.common import BENCH_LABEL, IMAGE, Fleet, Report, Row, trivial_request
from bench.scale import percentile
from evalfleet.sandbox.docker.labels import LABEL_RUN

LOOP = "while true; do sleep 0.1; done"
#: Seconds between two looks at the engine.
POLL_S = 0.02
#: Seconds a run's container has run before it is cancelled (its command under way).
SETTLE_S = 0.5
#: The target: the sandbox gone within this many ms of the cancel, at p95.
TARGET_MS = 2000.0


@dataclass
class Series:
    """Times (ms) of one runtime's runs and of its baseline."""

    runtime: str
    call: list[float] = field(default_factory=list)
    stopped: list[float] = field(default_factory=list)
    gone: list[float] = field(default_factory=list)
    baseline: list[float] = field(default_factory=list)

    def lines(self) -> list[str]:
        named = [("`client.cancel()` (its Redis round trips)", self.call),
                 ("cancel → container stopped", self.stopped),
                 ("cancel → container gone", self.gone),
                 ("baseline: idle container `remove(force=True)`", self.baseline)]
        return [f"| {self.runtime} | {name} | {len(values)} | {percentile(values, 50):,.1f} | "
                f"{percentile(values, 95):,.1f} | {max(values):,.1f} |"
                for name, values in named if values]


def looping_request() -> dict[str, Any]:
    """The trivial run, its one command looping until it is cancelled."""
    request = trivial_request("cancel")
    request["submission"]["commands"] = [{"run": LOOP, "timeout_ms": 600_000}]
    return request


def state(engine: Any, run_id: str) -> str:
    """The run's container's state (``running``, ``exited``, …), ``""`` once it is gone."""
    found = engine.api.containers(all=True, filters={"label": f"{LABEL_RUN}={run_id}"})
    return str(found[0]["State"]) if found else ""


def wait_running(engine: Any, run_id: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while state(engine, run_id) != "running":
        if time.monotonic() > deadline:
            raise RuntimeError(f"the sandbox of {run_id} did not start within {timeout} s")
        time.sleep(POLL_S)


def cancel_one(fleet: Fleet, engine: Any, series: Series, timeout: float = 60) -> None:
    """Submit a looping run, cancel it once it runs, time its container's end."""
    request = looping_request()
    run_id = request["run_id"]
    fleet.client.submit(request)
    wait_running(engine, run_id)
    time.sleep(SETTLE_S)
    started = time.perf_counter()
    answer = fleet.client.cancel(run_id)
    series.call.append(_since(started))
    if (answer.what, answer.was) != ("cancelled", "running"):
        raise RuntimeError(f"cancel of {run_id}: {answer.what} (was {answer.was})")
    _watch_end(engine, run_id, started, series, timeout)


def _watch_end(engine: Any, run_id: str, started: float, series: Series,
               timeout: float) -> None:
    """Poll the engine until the run's container is gone; note when it stopped running."""
    stopped = False
    while (now := state(engine, run_id)) != "":
        if now != "running" and not stopped:
            series.stopped.append(_since(started))
            stopped = True
        if _since(started) > timeout * 1000:
            raise RuntimeError(f"the sandbox of {run_id} outlived its cancel by {timeout} s")
        time.sleep(POLL_S)
    series.gone.append(_since(started))
    if not stopped:  # removed between two looks: it stopped no later than that
        series.stopped.append(series.gone[-1])


def remove_idle(engine: Any, runtime: str) -> float:
    """The baseline: ms to ``remove(force=True)`` a running container looping as a run's."""
    container = engine.containers.run(IMAGE, ["sh", "-c", LOOP], detach=True,
                                      runtime=runtime, network_mode="none",
                                      labels=dict([BENCH_LABEL.split("=")]))
    while container.status != "running":
        time.sleep(POLL_S)
        container.reload()
    time.sleep(SETTLE_S)
    started = time.perf_counter()
    container.remove(force=True)
    return _since(started)


def _since(started: float) -> float:
    return (time.perf_counter() - started) * 1000


def measure(fleet: Fleet, engine: Any, runtime: str, runs: int) -> Series:
    """``runs`` cancels on a node of one process on ``runtime``, each after a baseline."""
    series = Series(runtime)
    node = fleet.node(f"cancel-{runtime}", processes=1, pool_size=0, runtime=runtime)
    try:
        fleet.run_one()  # the first run pays imports and connections
        for _ in range(runs):
            series.baseline.append(remove_idle(engine, runtime))
            cancel_one(fleet, engine, series)
    finally:
        fleet.stop(node)
    return series


def offered(engine: Any, runtimes: list[str]) -> list[str]:
    """The runtimes of ``runtimes`` the engine offers."""
    known = engine.info().get("Runtimes", {})
    return [runtime for runtime in runtimes if runtime in known]


def run(fleet: Fleet, report: Report, runtimes: list[str], quick: bool = False) -> None:
    """The cancel case on every runtime of ``runtimes`` the engine offers."""
    engine: Any = docker.from_env()
    runs = 8 if quick else 20
    lines = ["| runtime | series | runs | p50 ms | p95 ms | max ms |",
             "| --- | --- | ---: | ---: | ---: | ---: |"]
    for runtime in offered(engine, runtimes):
        series = measure(fleet, engine, runtime, runs)
        lines += series.lines()
        _rows(report, series)
    report.section(f"Cancel → the run's sandbox ended (one node of 1 process, pool off; "
                   f"the engine polled every {POLL_S * 1000:.0f} ms; baseline interleaved): "
                   "\n\n" + "\n".join(lines) + "\n")
    engine.close()


def _rows(report: Report, series: Series) -> None:
    gone = percentile(series.gone, 95)
    row = Row(f"cancel → sandbox gone on {series.runtime} (p95) vs the 2 s target", gone,
              TARGET_MS, "ms", "≤ 1.0", False)
    row.met = row.ratio <= 1.0
    report.add(row)
    report.add(Row(f"cancel → sandbox gone on {series.runtime} (p50) vs idle container "
                   "`remove(force=True)` (p50)", percentile(series.gone, 50),
                   percentile(series.baseline, 50), "ms", "", False))
