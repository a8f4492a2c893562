"""What every benchmark case shares: medians, ratios, the baselines, a private fleet.

Every figure is printed next to a baseline measured in the same process run and as a
ratio to it (absolute times drift on a shared machine; ratios hold). Nothing here is a
timed assertion.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalfleet.tasks.platform import EvalfleetClient
from evalfleet.workers.devtools.local_fleet import RedisServer, Starter, WorkerNode, free_port

#: The image of the trivial run and of its ``docker run`` baseline (``evalfleet/busybox``,
#: tagged ``EVALFLEET_BENCH_IMAGE_TAG``: a set built with ``IMAGE_TAG=... build-images.sh``).
IMAGE = f"evalfleet/busybox:{os.environ.get('EVALFLEET_BENCH_IMAGE_TAG') or 'latest'}"
#: Label on everything a benchmark starts itself (swept at the end).
BENCH_LABEL = "evalfleet.bench=1"

#: The trivial run of issue 7: one file seeded, one command, one code_execution test,
#: one capture.
TRIVIAL_PACK: dict[str, Any] = {
    "pack": {"slug": "bench-trivial", "name": "Bench: trivial run"},
    "version": {
        "number": 1,
        "sandbox": {"network_access": False, "profile": "default"},
        "evaluation_spec": {
            "name": "bench-trivial", "version_number": 1, "judge_mode": "deterministic",
            "post_execution_checks": [
                {"key": "solution", "type": "file_capture", "path": "/workspace/solution.sh"}],
            "validators": [
                {"key": "tests", "type": "code_execution", "target": "file:solution",
                 "config": {"test_command": "sh solution.sh", "timeout_ms": 10000,
                            "scoring": "fraction_passed"}}],
            "scorecard": {"strategy": "weighted", "dimensions": ["correctness"]},
        },
    },
}


def trivial_request(prefix: str = "bench") -> dict[str, Any]:
    """A fresh trivial run request (its own run id)."""
    return {"run_id": f"{prefix}-{uuid.uuid4().hex[:12]}", "pack": TRIVIAL_PACK,
            "submission": {"files": {"solution.sh": "echo '1 passed'\n"},
                           "commands": [{"run": "sh solution.sh", "timeout_ms": 10000}]}}


@dataclass
class Row:
    """One printed line: evalfleet's figure, the baseline's, and how they compare."""

    case: str
    ours: float
    baseline: float
    unit: str
    target: str
    """What the ratio should be; empty for a comparison reported without a target."""
    met: bool
    note: str = ""

    @property
    def ratio(self) -> float:
        return self.ours / self.baseline if self.baseline else float("nan")

    def markdown(self) -> str:
        verdict = ("met" if self.met else "**missed**") if self.target else ""
        return (f"| {self.case} | {self.ours:,.1f} {self.unit} | {self.baseline:,.1f} "
                f"{self.unit} | {self.ratio:.2f} | {self.target} | {verdict} |")


@dataclass
class Report:
    """Rows and free-form tables collected while the cases run."""

    rows: list[Row] = field(default_factory=list)
    sections: list[str] = field(default_factory=list)

    def add(self, row: Row) -> None:
        self.rows.append(row)
        print(row.markdown(), flush=True)

    def section(self, text: str) -> None:
        self.sections.append(text)
        print(text, flush=True)

    def markdown(self) -> str:
        head = ("| case | evalfleet | baseline | ratio | target | |\n"
                "| --- | ---: | ---: | ---: | --- | --- |")
        return "\n".join([head, *(r.markdown() for r in self.rows), "", *self.sections])


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def timed_ms(action: Callable[[], object]) -> float:
    started = time.perf_counter()
    action()
    return (time.perf_counter() - started) * 1000


#: The runtimes every end-to-end case is measured on (each against its own baseline).
RUNTIMES = ("runc", "runsc")


def docker_run(image: str = IMAGE, runtime: str = "runc") -> None:
    """The baseline: a bare ``docker run --rm --network none --runtime R IMAGE true``."""
    subprocess.run(["docker", "run", "--rm", "--network", "none", "--runtime", runtime,
                    "--label", BENCH_LABEL, image, "true"], check=True, capture_output=True)


def sweep_containers() -> None:
    """Remove every container a benchmark labelled (the fleets remove their own)."""
    ids = subprocess.run(["docker", "ps", "-aq", "--filter", f"label={BENCH_LABEL}"],
                         capture_output=True, text=True, check=False).stdout.split()
    if ids:
        subprocess.run(["docker", "rm", "-f", *ids], capture_output=True, check=False)


@dataclass
class Fleet:
    """A private Redis, a client, and a starter for worker nodes (all stopped on exit)."""

    redis: RedisServer
    client: EvalfleetClient
    start: Starter
    workdir: Path
    settings: dict[str, str] = field(default_factory=dict)
    """Settings every node started from now on gets (``archive__url``: bench.archive)."""

    def node(self, name: str, processes: int = 1, pool_size: int = 0,
             runtime: str = "runc", reuse_runs: int = 1) -> WorkerNode:
        """A worker node with ``processes`` pool processes on the trivial run's image,
        its sandboxes on ``runtime``, each serving up to ``reuse_runs`` runs."""
        return self.start(name, args=["-c", str(processes)], concurrency=str(processes),
                          profiles__default__image=IMAGE, profiles__default__runtime=runtime,
                          profiles__default__pool_size=str(pool_size),
                          profiles__default__reuse_runs=str(reuse_runs), **self.settings)

    def stop(self, node: WorkerNode) -> None:
        node.stop()
        self.start.nodes.remove(node)

    def run_one(self, timeout: float = 120) -> tuple[float, Any]:
        """Submit one trivial run and wait for its scorecard: (ms, RunResult)."""
        request = trivial_request()
        started = time.perf_counter()
        self.client.submit(request)
        result = self.client.wait(request["run_id"], timeout=timeout)
        elapsed = (time.perf_counter() - started) * 1000
        if result.outcome != "scored":
            raise RuntimeError(f"bench run not scored: {result.outcome} {result.reason}")
        return elapsed, result

    def run_batch(self, count: int, timeout: float = 600) -> tuple[float, list[Any]]:
        """Submit ``count`` trivial runs at once; (seconds until the last result, results)."""
        requests = [trivial_request("batch") for _ in range(count)]
        started = time.perf_counter()
        self.client.submit_many(requests)
        results = [self.client.wait(r["run_id"], timeout=timeout) for r in requests]
        elapsed = time.perf_counter() - started
        failed = [r for r in results if r.outcome != "scored"]
        if failed:
            raise RuntimeError(f"{len(failed)} bench runs not scored: {failed[0].reason}")
        return elapsed, results


@contextmanager
def private_fleet() -> Iterator[Fleet]:
    """A fleet of our own: redis-server on a free port, worker nodes started on demand."""
    with tempfile.TemporaryDirectory(prefix="evalfleet-bench-") as tmp:
        workdir = Path(tmp)
        redis = RedisServer(free_port(), workdir).start()
        client = EvalfleetClient(redis.url)
        starter = Starter(redis.url, workdir, reaper_interval_s="600",
                          heartbeat_interval_s="5")
        try:
            yield Fleet(redis, client, starter, workdir)
        finally:
            starter.stop_all()
            client.close()
            redis.stop()


def rss_kib(pid: int) -> int:
    """Resident set size of a process in KiB (``/proc/PID/status``)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def children(pid: int) -> list[int]:
    """Direct child processes of ``pid``."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        text = (task / "children").read_text().split()
        found.extend(int(p) for p in text)
    return found
