"""The sidecar engine against the host's: the same trivial run, cold and warm, through a worker
driving the host's Docker engine and one driving an engine container (``deploy/engine``, as
each Kubernetes worker pod has; ``workers.devtools.local_engine``), on each runtime.

Both worker nodes run at once on their own profiles (queues), pinned to the same runtime; the
runs alternate between them (each first half of the time, each after 0.6 s of quiet, so that
neither pays for the other's container removal or pool refill), and drift hits both alike.
Each figure is enqueue → scorecard; the baseline is the same run through the host's engine.
Also printed: a bare ``docker run --rm`` on each engine, and what it costs to get the sandbox
images into a fresh engine (``docker save | docker load``). The host's engine must have every
runtime measured.
"""

from __future__ import annotations

import copy
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bench.common import (
    BENCH_LABEL,
    IMAGE,
    TRIVIAL_PACK,
    Fleet,
    Report,
    Row,
    median,
    timed_ms,
    trivial_request,
)
from evalfleet.workers.devtools.local_engine import LocalEngine

#: The profile (and queue) of the node that drives the sidecar engine.
SIDECAR = "sidecar"
#: The image a python pack runs in: what loading costs is measured on it.
PYTHON_IMAGE = "evalfleet/python:latest"


@contextmanager
def sidecar_engine(preload: list[str]) -> Iterator[LocalEngine]:
    """An engine container holding ``preload`` (saved here, loaded by the engine at start)."""
    import docker

    client = docker.from_env()
    with tempfile.TemporaryDirectory(prefix="evalfleet-bench-preload-") as tmp:
        subprocess.run(["docker", "save", "-o", f"{tmp}/images.tar", *preload], check=True)
        key, value = BENCH_LABEL.split("=")
        engine = LocalEngine(client, {key: value}, preload=Path(tmp))
        try:
            yield engine.start()
        finally:
            engine.remove()
            client.close()


def sidecar_request() -> dict[str, Any]:
    """The trivial run on the sidecar node's profile."""
    request = trivial_request("sidecar")
    request["pack"] = copy.deepcopy(TRIVIAL_PACK)
    request["pack"]["version"]["sandbox"]["profile"] = SIDECAR
    return request


def run_ms(fleet: Fleet, request: dict[str, Any], timeout: float = 120) -> float:
    started = time.perf_counter()
    fleet.client.submit(request)
    result = fleet.client.wait(request["run_id"], timeout=timeout)
    if result.outcome != "scored":
        raise RuntimeError(f"bench run not scored: {result.outcome} {result.reason}")
    return (time.perf_counter() - started) * 1000


def docker_run_ms(runtime: str, host: str | None = None) -> float:
    """``docker [-H host] run --rm --network none --runtime RUNTIME IMAGE true``."""
    command = ["docker", *(["-H", host] if host else []), "run", "--rm", "--network", "none",
               "--runtime", runtime, "--label", BENCH_LABEL, IMAGE, "true"]
    return timed_ms(lambda: subprocess.run(command, check=True, capture_output=True))


def overheads(fleet: Fleet, engine: LocalEngine, report: Report, runs: int, *, warm: bool,
              runtime: str) -> None:
    """Cold or warm runs alternating between a host-engine node and a sidecar-engine node."""
    pool = str(2 if warm else 0)
    nodes = [fleet.start("host", args=["-c", "1"], concurrency="1",
                         profiles__default__image=IMAGE, profiles__default__pool_size=pool,
                         profiles__default__runtime=runtime),
             fleet.start("sidecar", args=["-c", "1"], concurrency="1", queues=f'["{SIDECAR}"]',
                         docker_url=engine.url, profiles__sidecar__image=IMAGE,
                         profiles__sidecar__pool_size=pool, profiles__sidecar__runtime=runtime)]
    try:
        run_ms(fleet, trivial_request()), run_ms(fleet, sidecar_request())  # imports, connects
        host: list[float] = []
        side: list[float] = []
        for turn in range(runs * 2):
            # Each run on quiet engines: the previous run's removal (and pool refill) done,
            # whichever node ran it; and each node goes first half of the time.
            time.sleep(0.6)
            if (turn + turn // 2) % 2:
                side.append(run_ms(fleet, sidecar_request()))
            else:
                host.append(run_ms(fleet, trivial_request()))
    finally:
        for node in nodes:
            fleet.stop(node)
    name = "warm" if warm else "cold"
    report.add(Row(f"{name} run on {runtime} through the sidecar engine vs the host's (pool "
                   f"{'on' if warm else 'off'})", median(side), median(host), "ms", "", True))


def run(fleet: Fleet, report: Report, runs: int, runtimes: list[str]) -> None:
    """The sidecar case on each runtime: bare ``docker run`` on each engine, cold and warm
    runs; then the cost of loading the images into a fresh engine."""
    started = time.perf_counter()
    with sidecar_engine([IMAGE, PYTHON_IMAGE]) as engine:
        ready_s = time.perf_counter() - started
        for runtime in runtimes:
            host: list[float] = []
            side: list[float] = []
            for _ in range(runs):
                host.append(docker_run_ms(runtime))
                side.append(docker_run_ms(runtime, engine.url))
            report.add(Row(f"`docker run --rm --runtime {runtime}` on the sidecar engine vs "
                           "the host's", median(side), median(host), "ms", "", True))
            for warm in (False, True):
                overheads(fleet, engine, report, runs, warm=warm, runtime=runtime)
    report.section(load_cost(ready_s))


def load_cost(ready_s: float) -> str:
    """What a fresh engine costs before its first run: ``docker save`` + load of the python
    sandbox image, measured here once more against the engine's start with both images."""
    with sidecar_engine([IMAGE]) as engine:
        size = int(subprocess.run(["docker", "image", "inspect", "-f", "{{.Size}}",
                                   PYTHON_IMAGE], capture_output=True, text=True,
                                  check=True).stdout)
        started = time.perf_counter()
        save = subprocess.Popen(["docker", "save", PYTHON_IMAGE], stdout=subprocess.PIPE)
        subprocess.run(["docker", "-H", engine.url, "load", "-q"], stdin=save.stdout,
                       check=True, capture_output=True)
        save.wait()
        piped_s = time.perf_counter() - started
    return (f"A fresh sidecar engine with `{IMAGE}` and `{PYTHON_IMAGE}` preloaded "
            f"(`docker save` of both, then the engine's start and load until ready): "
            f"{ready_s:.1f} s. `docker save {PYTHON_IMAGE} | docker load` into a running engine "
            f"({size / 1e6:.0f} MB): {piped_s:.1f} s.\n")
