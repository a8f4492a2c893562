"""Helpers shared by the fault-injection tests (fixtures are in conftest.py): a private
fleet, the Docker-socket proxy an engine outage cuts, and the network namespace a
partitioned worker runs in."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import random
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalfleet.sandbox.docker.labels import LABEL_FLEET
from evalfleet.sandbox.docker.listing import labelled
from evalfleet.tasks.messages import RunRequest
from evalfleet.workers.devtools.local_fleet import RedisServer, Starter, WorkerNode

TEST_WORKER_SETTINGS = {"retry_backoff_s": "0.2", "heartbeat_interval_s": "0.5",
                        "heartbeat_ttl_s": "3", "reaper_interval_s": "1"}


def pack(profile: str = "default", expected: str = "hi") -> dict[str, Any]:
    """A one-validator pack: the final output must contain ``expected``."""
    return {
        "pack": {"slug": "rel"},
        "version": {
            "sandbox": {"profile": profile},
            "evaluation_spec": {
                "name": "rel", "version_number": 1, "judge_mode": "deterministic",
                "validators": [{"key": "hi", "type": "contains", "target": "final_output",
                                "expected_from": f"literal:{expected}"}],
                "scorecard": {"dimensions": ["correctness"]}}},
    }


def new_id(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def run_request(prefix: str, command: str = "echo hi", profile: str = "default",
                **extra: Any) -> RunRequest:
    """A request whose one command is ``command`` (passing when it prints "hi")."""
    return RunRequest(run_id=new_id(prefix), pack=pack(profile),
                      submission={"commands": [{"run": command, "timeout_ms": 120_000}]},
                      **extra)


def wait_for(check: Callable[[], Any], timeout: float, what: str) -> Any:
    """Poll ``check`` (bounded) until it returns something truthy; that value."""
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found:
            return found
        assert time.monotonic() < deadline, f"{what} within {timeout} s"
        time.sleep(0.1)


@dataclass
class PrivateFleet:
    """A private Redis, the workers started on it, a client, and the fleet's containers."""

    redis: RedisServer
    starter: Starter
    docker: Any
    label: str
    clients: list[Any] = field(default_factory=list)

    def start(self, name: str, args: list[str] | None = None, **settings: str) -> WorkerNode:
        return self.starter(name, args, **settings)

    def launch(self, name: str, args: list[str] | None = None, **settings: str) -> WorkerNode:
        """Start a worker without waiting for it to be ready."""
        return self.starter.launch(name, args, **settings)

    def client(self, url: str | None = None) -> Any:
        from evalfleet.tasks.platform import EvalfleetClient

        made = EvalfleetClient(url or self.redis.url)
        self.clients.append(made)
        return made

    def sender(self) -> Any:
        """A Celery app sending ``evalfleet.run`` straight to the queues (bodies the
        clients would refuse, duplicates), as the intake's forwarder does."""
        from evalfleet.tasks.platform.intake import sender_app

        return sender_app(self.redis.url)

    def containers(self, **labels: str) -> list[Any]:
        wanted = [f"{LABEL_FLEET}={self.label}", *(f"{k}={v}" for k, v in labels.items())]
        return labelled(self.docker, wanted)

    def results_streamed(self, run_ids: set[str]) -> dict[str, int]:
        """How many times each run id appears on the results stream."""
        counts = dict.fromkeys(run_ids, 0)
        redis = self.clients[0].redis if self.clients else self.client().redis
        for _, fields in redis.xrange("evalfleet:results"):
            run_id = fields[b"run_id"].decode()
            if run_id in counts:
                counts[run_id] += 1
        return counts


def log_of(node: WorkerNode) -> str:
    return node.log.read_text(errors="replace")


def dump(data: Any) -> str:
    return json.dumps(data)


def metric(node: WorkerNode, name: str, **labels: str) -> float:
    """The value of one sample of a node's metrics (0 when it is not exported)."""
    from prometheus_client.parser import text_string_to_metric_families

    for family in text_string_to_metric_families(node.metrics()):
        for found in family.samples:
            if found.name == name and all(found.labels.get(k) == v for k, v in labels.items()):
                return float(found.value)
    return 0.0


def process_tree(pid: int) -> list[int]:
    """``pid`` and its descendants."""
    found = [pid]
    for child in children(pid):
        found += process_tree(child)
    return found


def children(pid: int) -> list[int]:
    """The child processes of ``pid``, from every one of its threads. A thread or process
    that ends while they are read (its ``/proc`` entry gone between listing and reading)
    has none left; nothing else is skipped."""
    return [int(child) for task in _listing(Path(f"/proc/{pid}/task"))
            for child in _text(task / "children").split()]


#: What reading a ``/proc`` entry of a thread or process that just ended raises.
_GONE = (FileNotFoundError, ProcessLookupError)


def _listing(path: Path) -> list[Path]:
    try:
        return list(path.iterdir())
    except _GONE:
        return []


def _text(path: Path) -> str:
    try:
        return path.read_text()
    except _GONE:
        return ""


def cpu_seconds(node: WorkerNode) -> float:
    """CPU time used so far by a node's processes (main process and pool)."""
    assert node.process is not None
    total = 0
    for pid in process_tree(node.process.pid):
        with contextlib.suppress(FileNotFoundError):
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / os.sysconf("SC_CLK_TCK")


ENGINE = "/var/run/docker.sock"


class SocketProxy:
    """Forwards a unix socket to the Docker engine's until cut; restorable."""

    def __init__(self, path: Path, target: str = ENGINE) -> None:
        self.path, self.target = path, target
        self.lock = threading.Lock()
        self.open: list[socket.socket] = []
        self.listener: socket.socket | None = None
        self.stopped = threading.Event()
        self.restore()

    def restore(self) -> None:
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.path.unlink(missing_ok=True)
        listener.bind(str(self.path))
        listener.listen(64)
        listener.settimeout(0.2)
        self.listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def cut(self) -> None:
        """Close the listener (new connections are refused) and every open connection,
        including one accepted just before the cut (it is never forwarded)."""
        with self.lock:
            listener, self.listener = self.listener, None
            if listener is not None:
                listener.close()
            self.path.unlink(missing_ok=True)
            for sock in self.open:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                sock.close()
            self.open.clear()

    def close(self) -> None:
        self.stopped.set()
        self.cut()

    def _accept(self, listener: socket.socket) -> None:
        while listener is self.listener and not self.stopped.is_set():
            try:
                client, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            engine = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            engine.connect(self.target)
            with self.lock:
                if listener is not self.listener:  # cut while this one was being accepted
                    client.close()
                    engine.close()
                    return
                self.open += [client, engine]
            for a, b in ((client, engine), (engine, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(source: socket.socket, sink: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := source.recv(65536):
                sink.sendall(data)
        with contextlib.suppress(OSError):
            sink.shutdown(socket.SHUT_WR)


PREFIX = "efrel"


def ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, timeout=10)


@dataclass
class Host:
    """A network namespace with one veth to the root namespace."""

    netns: str
    outside: str
    host_addr: str
    worker_addr: str

    def link(self, state: str) -> None:
        ip("link", "set", self.outside, state)


def namespaces_available() -> None:
    """Skip (fail in CI) unless network namespaces can be made: root and iproute2."""
    if os.geteuid() != 0 or subprocess.run(["ip", "netns", "list"], capture_output=True,
                                           check=False).returncode != 0:
        from services import missing_service

        missing_service("network namespaces (root + iproute2)", PermissionError("not root"))


#: Held while a test picks a subnet and puts it on its link, so that two tests on this
#: machine never pick the same one.
SUBNET_LOCK = Path(tempfile.gettempdir()) / "evalfleet-netns.lock"


def _claim_subnet() -> tuple[Any, int]:
    """The subnet lock (held: close it once the address is on the link) and a
    10.231.N.0/30 that no link of the root namespace has — two namespaces on one subnet
    send each other's replies astray (connections time out)."""
    lock = SUBNET_LOCK.open("a")
    fcntl.flock(lock, fcntl.LOCK_EX)
    used = subprocess.run(["ip", "-o", "-4", "addr", "show"], capture_output=True, text=True,
                          check=True, timeout=10).stdout
    free = [n for n in range(1, 250) if f" 10.231.{n}." not in used]
    return lock, random.choice(free)


@contextlib.contextmanager
def network_host() -> Iterator[Host]:
    """A namespace + veth on a subnet of its own, removed on the way out (asserted gone)."""
    tag = f"{os.getpid() % 10000}{random.randrange(100)}"
    lock, net = _claim_subnet()
    host = Host(f"{PREFIX}-{tag}", f"{PREFIX}h{tag}", f"10.231.{net}.1", f"10.231.{net}.2")
    inside = f"{PREFIX}w{tag}"
    try:
        ip("netns", "add", host.netns)
    except BaseException:
        lock.close()
        raise
    try:
        try:
            ip("link", "add", host.outside, "type", "veth", "peer", "name", inside)
            ip("link", "set", inside, "netns", host.netns)
            ip("addr", "add", f"{host.host_addr}/30", "dev", host.outside)
        finally:
            lock.close()
        ip("link", "set", host.outside, "up")
        ip("-n", host.netns, "addr", "add", f"{host.worker_addr}/30", "dev", inside)
        ip("-n", host.netns, "link", "set", inside, "up")
        ip("-n", host.netns, "link", "set", "lo", "up")
        yield host
    finally:
        with contextlib.suppress(subprocess.CalledProcessError):
            ip("netns", "del", host.netns)
        with contextlib.suppress(subprocess.CalledProcessError):
            ip("link", "del", host.outside)
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True,
                            check=True).stdout
    assert host.netns not in listed


class NamespacedNode(WorkerNode):
    """A worker node started inside a network namespace (``ip netns exec``)."""

    netns: str = ""

    def launch(self) -> WorkerNode:
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(
                ["ip", "netns", "exec", self.netns, sys.executable, "-m", "evalfleet.workers",
                 "worker", *self.args], env=self.env, stdout=out, stderr=subprocess.STDOUT,
                start_new_session=True)
        return self
