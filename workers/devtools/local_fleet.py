"""A fleet on this machine: a private Redis and worker node processes on loopback.

Used by ``evalfleet demo`` and by the integration tests; every process started here is
stopped by its owner (``stop``), nothing is left running.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path


def free_port() -> int:
    """A free TCP port on 127.0.0.1."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_until(check: Callable[[], bool], timeout: float, what: str) -> None:
    """Poll ``check`` until it is true.

    Raises:
        TimeoutError: naming ``what``, after ``timeout`` seconds.
    """
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
        """Start it and wait until it answers PING.

        Raises:
            TimeoutError: it did not answer within 10 s.
        """
        args = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1",
                "--dir", str(self.workdir), "--save", "", "--appendfsync", "everysec",
                "--appendonly", "yes" if self.appendonly else "no"]
        self.process = subprocess.Popen(args, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.STDOUT)
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


def worker_env(redis_url: str, worker_id: str, workdir: Path,
               **settings: str) -> dict[str, str]:
    """The environment of one worker node (``settings`` become ``EVALFLEET_<NAME>``). Its
    archive is off unless ``archive__url`` names one: while a fleet archives, its Redis
    keeps results without a TTL until they are archived, which tests sharing a Redis must
    not see by surprise."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("EVALFLEET_")}
    env.update({
        "EVALFLEET_REDIS_URL": redis_url, "EVALFLEET_WORKER_ID": worker_id,
        "EVALFLEET_HEARTBEAT_FILE": str(workdir / f"{worker_id}.heartbeat"),
        "PROMETHEUS_MULTIPROC_DIR": str(workdir / f"{worker_id}.prom"),
        # one key for the nodes of a workdir: the first creates it (workers.fleet_key)
        "EVALFLEET_SIGNING__KEY_FILE": str(workdir / "signing.key"),
    })
    env["EVALFLEET_ARCHIVE__URL"] = "none"  # a test's or bench's own choice (archive__url)
    env.update({f"EVALFLEET_{k.upper()}": v for k, v in settings.items()})
    return env


#: How long a stopped node gets before SIGKILL: a warm shutdown finishes its pending
#: sandbox removals (up to a minute: ``tasks.evaluation.closing.Closer.drain``) and removes its warm
#: pool; killed sooner, it leaves them to a reaper (the deployments allow 13 minutes).
STOP_TIMEOUT_S = 120.0


@dataclass
class WorkerNode:
    """One ``evalfleet worker`` process (its own session, so a group kill reaches its pool)."""

    worker_id: str
    env: dict[str, str]
    log: Path
    metrics_port: int
    args: list[str] = field(default_factory=lambda: ["-c", "1"])
    process: subprocess.Popen[bytes] | None = None
    python: str = sys.executable
    """The interpreter that runs it (another virtualenv's, to test an installed wheel)."""
    cwd: Path | None = None

    def start(self, ready_timeout: float = 30) -> WorkerNode:
        """Start it and wait for Celery's "ready".

        Raises:
            RuntimeError: it exited during start-up (its log tail is in the message).
            TimeoutError: it was not ready within ``ready_timeout``.
        """
        return self.launch().wait_ready(ready_timeout)

    def launch(self) -> WorkerNode:
        """Start the process (without waiting for it to be ready)."""
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(
                [self.python, "-m", "evalfleet.workers", "worker", *self.args], env=self.env,
                cwd=self.cwd, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        return self

    def wait_ready(self, ready_timeout: float = 30) -> WorkerNode:
        """Wait for Celery's "ready".

        Raises:
            RuntimeError: it exited during start-up (its log tail is in the message).
            TimeoutError: it was not ready within ``ready_timeout``.
        """
        wait_until(lambda: b" ready." in self.log.read_bytes() or not self.alive,
                   ready_timeout, f"worker {self.worker_id} did not become ready")
        if not self.alive:
            raise RuntimeError(f"worker {self.worker_id} exited:\n{self.log.read_text()[-3000:]}")
        return self

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def stop(self, sig: int = signal.SIGTERM, timeout: float = STOP_TIMEOUT_S) -> None:
        """Signal the whole process group; SIGKILL what is left after ``timeout``."""
        if not self.alive or self.process is None:
            return
        os.killpg(self.process.pid, sig)
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(10)

    def metrics(self) -> str:
        """The node's Prometheus exposition."""
        import urllib.request

        with urllib.request.urlopen(f"http://127.0.0.1:{self.metrics_port}/metrics") as page:
            return str(page.read().decode())


class Starter:
    """Starts worker nodes against one Redis; :meth:`stop_all` stops every one."""

    def __init__(self, redis_url: str, workdir: Path, **defaults: str) -> None:
        self.redis_url, self.workdir, self.defaults = redis_url, workdir, defaults
        self.nodes: list[WorkerNode] = []

    def __call__(self, name: str, args: list[str] | None = None, **settings: str) -> WorkerNode:
        """Start a node and wait until it is ready."""
        return self.launch(name, args, **settings).wait_ready()

    def launch(self, name: str, args: list[str] | None = None, **settings: str) -> WorkerNode:
        """Start a node without waiting for it."""
        port = free_port()
        worker_id = f"{name}-{os.getpid()}-{len(self.nodes)}-{port}"
        env = worker_env(self.redis_url, worker_id, self.workdir, metrics_port=str(port),
                         metrics_addr="127.0.0.1", **{**self.defaults, **settings})
        node = WorkerNode(worker_id, env, self.workdir / f"{worker_id}.log", port,
                          args=args or ["-c", "1"])
        self.nodes.append(node)
        return node.launch()

    def stop_all(self) -> None:
        for node in self.nodes:
            node.stop()
