"""Real services for integration tests: a Redis server process and evalfleet worker nodes.

Everything listens on loopback ports picked at random; every process started here is
stopped at the end of its fixture.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from services import missing_service

ROOT = Path(__file__).parents[2]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_until(check: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.05)
    raise TimeoutError(f"{what} within {timeout} s")


@dataclass
class RedisServer:
    """A private ``redis-server`` on a loopback port."""

    port: int
    workdir: Path
    appendonly: bool = False
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> RedisServer:
        args = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1",
                "--dir", str(self.workdir), "--save", "",
                "--appendonly", "yes" if self.appendonly else "no", "--appendfsync", "everysec"]
        self.process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        wait_until(self._answers, 10, "redis-server did not answer")
        return self

    def _answers(self) -> bool:
        import redis

        try:
            return bool(redis.Redis(port=self.port).ping())
        except redis.ConnectionError:
            return False

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(10)


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """One private Redis for the session (tests use unique keys, never FLUSHALL)."""
    if shutil.which("redis-server") is None:
        missing_service("redis-server", FileNotFoundError("not on PATH (scripts/setup.sh)"))
    server = RedisServer(free_port(), tmp_path_factory.mktemp("redis")).start()
    yield server
    server.stop()


@dataclass
class WorkerNode:
    """One ``evalfleet worker`` process."""

    worker_id: str
    env: dict[str, str]
    log: Path
    metrics_port: int
    heartbeat: Path
    process: subprocess.Popen[bytes] | None = None
    args: list[str] = field(default_factory=lambda: ["-c", "1"])

    def start(self, ready_timeout: float = 30) -> WorkerNode:
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "workers", "worker", *self.args], cwd=ROOT,
                env=self.env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        wait_until(lambda: b" ready." in self.log.read_bytes() or self.process.poll() is not None,
                   ready_timeout, f"worker {self.worker_id} did not become ready")
        if self.process.poll() is not None:
            raise RuntimeError(f"worker {self.worker_id} exited:\n{self.log.read_text()[-3000:]}")
        return self

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 30) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        os.killpg(self.process.pid, sig)
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(10)

    def metrics(self) -> str:
        import urllib.request

        with urllib.request.urlopen(f"http://127.0.0.1:{self.metrics_port}/metrics") as page:
            return str(page.read().decode())


def worker_env(redis_url: str, worker_id: str, tmp: Path, **settings: str) -> dict[str, str]:
    """Environment of a worker node: the real Docker engine, a private Redis."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("EVALFLEET_")}
    env.update({
        "EVALFLEET_REDIS_URL": redis_url, "EVALFLEET_WORKER_ID": worker_id,
        "EVALFLEET_HEARTBEAT_FILE": str(tmp / f"{worker_id}.heartbeat"),
        "EVALFLEET_RETRY_BACKOFF_S": "0.2", "EVALFLEET_HEARTBEAT_INTERVAL_S": "0.5",
        "EVALFLEET_HEARTBEAT_TTL_S": "3",
        "PROMETHEUS_MULTIPROC_DIR": str(tmp / f"{worker_id}.prom"),
    })
    env.update({f"EVALFLEET_{k.upper()}": v for k, v in settings.items()})
    return env


class Starter:
    """Starts worker nodes against one Redis; stops them all on :meth:`stop_all`."""

    def __init__(self, redis_url: str, tmp: Path) -> None:
        self.redis_url, self.tmp = redis_url, tmp
        self.nodes: list[WorkerNode] = []

    def __call__(self, name: str, args: list[str] | None = None, **settings: str) -> WorkerNode:
        port = free_port()
        worker_id = f"{name}-{os.getpid()}-{len(self.nodes)}-{port}"
        env = worker_env(self.redis_url, worker_id, self.tmp, metrics_port=str(port),
                         metrics_addr="127.0.0.1", **settings)
        node = WorkerNode(worker_id, env, self.tmp / f"{worker_id}.log", port,
                          Path(env["EVALFLEET_HEARTBEAT_FILE"]), args=args or ["-c", "1"])
        self.nodes.append(node)
        return node.start()

    def stop_all(self) -> None:
        for node in self.nodes:
            node.stop()


@pytest.fixture
def start_worker(redis_server: RedisServer, docker_client: Any,
                 tmp_path: Path) -> Iterator[Starter]:
    """Start worker nodes for one test (``start_worker("w", queues='["default"]')``)."""
    starter = Starter(redis_server.url, tmp_path)
    yield starter
    starter.stop_all()


@pytest.fixture(scope="module")
def fleet(redis_server: RedisServer, docker_client: Any,
          tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[WorkerNode]]:
    """Two worker nodes (one pool process each) shared by a test module."""
    starter = Starter(redis_server.url, tmp_path_factory.mktemp("fleet"))
    nodes = [starter("fleet"), starter("fleet")]
    yield nodes
    starter.stop_all()


@pytest.fixture
def client(redis_server: RedisServer) -> Iterator[Any]:
    """An EvalfleetClient on the private Redis."""
    from tasks.client import EvalfleetClient

    found = EvalfleetClient(redis_server.url)
    yield found
    found.close()
