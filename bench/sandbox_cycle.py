"""Benchmark: sandbox acquisition (cold, warm) and a full run cycle, against ``docker run``.

Run with ``python -m bench.sandbox_cycle [IMAGE] [N]`` from the repository root (needs the
Docker engine and the images from ``scripts/build-images.sh``). Every figure is a median of
N runs, measured in this one process, next to the baseline ``docker run --rm --network none
IMAGE true`` of the same image, and reported as a ratio to it (< 1 means cheaper than a bare
``docker run``). Numbers go in ``BENCHMARKS.md``; nothing here is a timed assertion.
Containers are labelled ``evalfleet.bench=1`` and removed at the end.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import docker

from evalfleet.sandbox.capture import CaptureCheck, ListingCheck
from evalfleet.sandbox.command import Command, SeedFile
from evalfleet.sandbox.docker.factory import DockerFactory
from evalfleet.sandbox.docker.listing import labelled
from evalfleet.sandbox.docker.pool import WarmPool
from evalfleet.sandbox.evaluation import plans
from evalfleet.sandbox.execution import CodeExecution
from evalfleet.sandbox.plan import Plan
from evalfleet.sandbox.profile import Profile

LABELS = {"evalfleet.bench": "1"}
PLAN = Plan(
    files=(SeedFile("solution.py", "def add(a, b):\n    return a + b\n"),
           SeedFile("data/input.txt", "1 2\n")),
    commands=(Command("python3 solution.py || true"),),
    test_files=(SeedFile("test_solution.py", "from solution import add\n\n"
                         "def test_add():\n    assert add(1, 2) == 3\n"),),
    tests=(CodeExecution(validator_key="tests", target="file:solution",
                         target_path="/workspace/solution.py", test_command="echo 1 passed"),),
    checks=(CaptureCheck("solution", "solution.py"), ListingCheck("tree", "/workspace")))


def median_ms(action: Callable[[], object], runs: int) -> float:
    """Median wall time of ``action`` in milliseconds (one warm-up run first)."""
    action()
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        action()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def docker_run(image: str) -> None:
    subprocess.run(["docker", "run", "--rm", "--network", "none", "--label",
                    "evalfleet.bench=1", image, "true"], check=True, capture_output=True)


def cold_cycle(factory: DockerFactory, profile: Profile, plan: Plan | None) -> None:
    with factory.acquire(profile, run_id="bench") as sandbox:
        if plan is not None:
            plans.run_plan(sandbox, plan)


def warm_cycle(pool: WarmPool, profile: Profile, plan: Plan | None) -> None:
    wait_for_idle(pool)
    started = time.perf_counter()
    with pool.acquire(profile, run_id="bench") as sandbox:
        if plan is not None:
            plans.run_plan(sandbox, plan)
    WARM_TIMES.append((time.perf_counter() - started) * 1000)


WARM_TIMES: list[float] = []


def wait_for_idle(pool: WarmPool) -> None:
    """Let the refill catch up outside the timed section (a fleet has idle time too)."""
    while pool.stats()[0].idle < 1:
        time.sleep(0.01)


def warm_median(pool: WarmPool, profile: Profile, plan: Plan | None, runs: int) -> float:
    WARM_TIMES.clear()
    for _ in range(runs + 1):
        warm_cycle(pool, profile, plan)
    return statistics.median(WARM_TIMES[1:])


def main(image: str = "evalfleet/python:latest", runs: int = 15) -> None:
    client: Any = docker.from_env()
    profile = Profile(name="bench", image=image)
    factory = DockerFactory(client, worker="bench", extra_labels=LABELS)
    pool = WarmPool(factory, [(profile, 2)]).start()
    try:
        base = median_ms(lambda: docker_run(image), runs)
        rows = [("`docker run --rm --network none IMAGE true` (CLI)", base),
                ("cold acquire + close", median_ms(lambda: cold_cycle(factory, profile, None),
                                                   runs)),
                ("warm acquire + close", warm_median(pool, profile, None, runs)),
                ("cold full cycle (plan) + close", median_ms(
                    lambda: cold_cycle(factory, profile, PLAN), runs)),
                ("warm full cycle (plan) + close", warm_median(pool, profile, PLAN, runs))]
    finally:
        pool.close()
        for container in labelled(client, ["evalfleet.bench=1"]):
            container.remove(force=True)
    print(f"image {image}, median of {runs} runs")
    print("| operation | median ms | ratio to docker run |")
    print("| --- | ---: | ---: |")
    for name, value in rows:
        print(f"| {name} | {value:.0f} | {value / base:.2f} |")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "evalfleet/python:latest",
         int(sys.argv[2]) if len(sys.argv) > 2 else 15)
