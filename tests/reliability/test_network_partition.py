"""A worker host cut off from Redis by the network, mid-run, and joined again.

The cut-off worker runs as its own host: a network namespace this test creates, joined to
the root namespace by a veth pair with addresses from 10.231.0.0/16 that exist only on that
pair. Redis listens on loopback and on the host side of the veth; dropping the host side of
the link partitions the worker without closing its TCP connections. Docker is reached over
its unix socket, which no network namespace affects.
"""

from __future__ import annotations

import contextlib
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
import redis
from fleet_support import PrivateFleet, run_request, wait_for

from workers.localfleet import WorkerNode, worker_env
from workers.localfleet import wait_until as wait_ready

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


@pytest.fixture
def worker_host() -> Iterator[Host]:
    """A namespace + veth (removed after the test; the test fails if any is left)."""
    if os.geteuid() != 0 or subprocess.run(["ip", "netns", "list"], capture_output=True,
                                           check=False).returncode != 0:
        from services import missing_service

        missing_service("network namespaces (root + iproute2)", PermissionError("not root"))
    tag = f"{os.getpid() % 10000}{random.randrange(100)}"
    net = random.randrange(1, 250)
    host = Host(f"{PREFIX}-{tag}", f"{PREFIX}h{tag}", f"10.231.{net}.1", f"10.231.{net}.2")
    inside = f"{PREFIX}w{tag}"
    ip("netns", "add", host.netns)
    try:
        ip("link", "add", host.outside, "type", "veth", "peer", "name", inside)
        ip("link", "set", inside, "netns", host.netns)
        ip("addr", "add", f"{host.host_addr}/30", "dev", host.outside)
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

    def start(self, ready_timeout: float = 30) -> WorkerNode:
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(
                ["ip", "netns", "exec", self.netns, sys.executable, "-m", "workers", "worker",
                 *self.args], env=self.env, stdout=out, stderr=subprocess.STDOUT,
                start_new_session=True)
        wait_ready(lambda: b" ready." in self.log.read_bytes() or not self.alive,
                   ready_timeout, f"worker {self.worker_id} did not become ready")
        assert self.alive, self.log.read_text()[-3000:]
        return self


def test_partitioned_worker_is_replaced_then_rejoins(private_fleet: PrivateFleet,
                                                     worker_host: Host) -> None:
    """Mid-run, the worker's link to Redis drops. Another worker gets the run after the
    visibility timeout and publishes it; when the link returns the cut-off worker's own
    result is a duplicate, and it resumes consuming."""
    server = redis.Redis(port=private_fleet.redis.port)
    server.config_set("bind", f"127.0.0.1 {worker_host.host_addr}")
    server.config_set("protected-mode", "no")
    settings = {"visibility_timeout_s": "5", "fleet": private_fleet.label,
                "retry_backoff_s": "0.2", "heartbeat_interval_s": "0.5",
                "heartbeat_ttl_s": "3", "reaper_interval_s": "1"}
    url = f"redis://{worker_host.host_addr}:{private_fleet.redis.port}/0"
    workdir = private_fleet.starter.workdir
    cut = NamespacedNode("cut", worker_env(url, "cut-off", workdir, metrics_port="0",
                                           **settings), workdir / "cut-off.log", 0)
    cut.netns = worker_host.netns
    private_fleet.starter.nodes.append(cut)  # stopped with the others
    cut.start()
    client = private_fleet.client()
    request = run_request("partition", "sleep 6; echo hi")
    client.submit(request)
    wait_for(lambda: private_fleet.containers(**{"evalfleet.run_id": request.run_id}), 30,
             "the cut-off worker did not start the run")

    worker_host.link("down")
    try:
        survivor = private_fleet.start("survivor", **settings)
        result = client.wait(request.run_id, timeout=60)
        assert (result.outcome, result.worker) == ("scored", survivor.worker_id)
        time.sleep(3)  # the cut-off copy finishes meanwhile, unable to publish
    finally:
        worker_host.link("up")
    survivor.stop()

    later = run_request("rejoined")
    client.submit(later)
    rejoined = client.wait(later.run_id, timeout=90)

    assert (rejoined.outcome, rejoined.worker) == ("scored", "cut-off")
    assert private_fleet.results_streamed({request.run_id, later.run_id}) == {
        request.run_id: 1, later.run_id: 1}
    assert cut.alive
    cut.stop(signal.SIGTERM)
