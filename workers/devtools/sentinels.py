"""A Redis that survives losing its primary, on loopback: a primary, a replica and three
sentinels (``redis-server --sentinel``), for the failover tests and ``bench failover``.

Every node asks for the same password (``requirepass``, ``masterauth``, the sentinels'
``auth-pass``), as a deployment's would. The sentinels declare the primary down after one
second without an answer; two of three agree before the replica is promoted.
"""

from __future__ import annotations

import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .local_fleet import free_port, wait_until

MASTER = "evalfleet"
DOWN_AFTER_MS = 1000
FAILOVER_TIMEOUT_MS = 10_000


@dataclass
class SentinelGroup:
    """One primary, one replica, three sentinels; :meth:`kill_primary` fails it over."""

    workdir: Path
    password: str = "sentinel-test-password"
    username: str = ""
    """An ACL user of the data nodes to log in as (``""``: the default user and
    ``requirepass``); the replica and the sentinels log in as it too."""
    down_after_ms: int = DOWN_AFTER_MS
    """Silence after which the sentinels call a node down. A replica cut off from the primary
    for ten times this is not promoted (Sentinel's rule): a test that keeps one cut off for
    long gives it more."""
    data_ports: list[int] = field(default_factory=lambda: [free_port(), free_port()])
    sentinel_ports: list[int] = field(default_factory=lambda: [free_port() for _ in range(3)])
    processes: dict[int, subprocess.Popen[bytes]] = field(default_factory=dict)

    @property
    def url(self) -> str:
        """The fleet's Redis URL: Sentinel's form (:mod:`tasks.redis_connection`)."""
        nodes = ",".join(f"127.0.0.1:{port}" for port in self.sentinel_ports)
        return f"sentinel://{self.username}:{self.password}@{nodes}/{MASTER}/0"

    def _login(self) -> list[str]:
        """The data nodes' login: ``requirepass``, or an ACL user (the default user off)."""
        if not self.username:
            return ["--requirepass", self.password, "--masterauth", self.password]
        return ["--user", self.username, "on", f">{self.password}", "~*", "&*", "+@all",
                "--user", "default", "off", "--masteruser", self.username,
                "--masterauth", self.password]

    def start(self) -> SentinelGroup:
        """Start every node; return once the sentinels know the replica.

        Raises:
            TimeoutError: a node did not answer, or the sentinels never saw the replica.
        """
        primary, replica = self.data_ports
        self._server(primary)
        self._server(replica, "--replicaof", "127.0.0.1", str(primary))
        wait_until(lambda: self._in_sync(replica), 30, "the replica did not sync")
        for port in self.sentinel_ports:
            self._sentinel(port, primary)
        wait_until(lambda: all(self._replicas_known(p) for p in self.sentinel_ports), 30,
                   "the sentinels did not find the replica")
        return self

    def _in_sync(self, replica: int) -> bool:
        import redis

        try:
            info = self._client(replica).info("replication")
        except redis.RedisError:
            return False
        return bool(info.get("master_link_status") == "up")

    def _server(self, port: int, *extra: str) -> None:
        args = ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                "--dir", str(self.workdir), "--dbfilename", f"dump-{port}.rdb",
                *self._login(), *extra]
        self._spawn(port, args, f"redis-{port}.log")
        wait_until(lambda: self._answers(port), 10, f"redis-server :{port} did not answer")

    def _sentinel(self, port: int, primary: int) -> None:
        conf = self.workdir / f"sentinel-{port}.conf"
        conf.write_text("\n".join([
            f"port {port}", "bind 127.0.0.1", f"dir {self.workdir}",
            f"sentinel monitor {MASTER} 127.0.0.1 {primary} 2",
            f"sentinel auth-pass {MASTER} {self.password}",
            *([f"sentinel auth-user {MASTER} {self.username}"] if self.username else []),
            f"sentinel down-after-milliseconds {MASTER} {self.down_after_ms}",
            f"sentinel failover-timeout {MASTER} {FAILOVER_TIMEOUT_MS}",
            f"sentinel parallel-syncs {MASTER} 1", ""]))
        self._spawn(port, ["redis-server", str(conf), "--sentinel"], f"sentinel-{port}.log")
        wait_until(lambda: self._answers(port, sentinel=True), 10,
                   f"sentinel :{port} did not answer")

    def _spawn(self, port: int, args: list[str], log: str) -> None:
        with (self.workdir / log).open("ab") as out:
            self.processes[port] = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT)

    def _client(self, port: int, sentinel: bool = False) -> Any:
        import redis

        if sentinel:
            return redis.Redis(port=port, socket_timeout=2)
        return redis.Redis(port=port, username=self.username or None, password=self.password,
                           socket_timeout=2)

    def _answers(self, port: int, sentinel: bool = False) -> bool:
        import redis

        try:
            return bool(self._client(port, sentinel).ping())
        except redis.RedisError:
            return False

    def _replicas_known(self, port: int) -> bool:
        import redis

        try:
            return bool(self._client(port, sentinel=True).sentinel_slaves(MASTER))
        except redis.RedisError:
            return False

    def primary_port(self) -> int:
        """The port of the server the sentinels call the primary now."""
        import redis

        for port in self.sentinel_ports:
            try:
                _, found = self._client(port, sentinel=True).sentinel_get_master_addr_by_name(
                    MASTER)
                return int(found)
            except (redis.RedisError, TypeError):
                continue
        raise RuntimeError("no sentinel answered")

    def kill_primary(self) -> int:
        """SIGKILL the primary (a node lost with its memory); returns its port."""
        port = self.primary_port()
        process = self.processes[port]
        process.send_signal(signal.SIGKILL)
        process.wait(10)
        return port

    def replica_port(self) -> int:
        """The port of the data node that is not the primary now."""
        primary = self.primary_port()
        return next(port for port in self.data_ports if port != primary)

    def cut_off(self, replica: int) -> None:
        """Stop ``replica`` hearing from the primary: SIGSTOP it, then have the primary drop
        its link (what the primary writes from now on never reaches it; a paused replica
        alone would still read what the kernel buffered for it)."""
        self.processes[replica].send_signal(signal.SIGSTOP)
        self._client(self.primary_port()).client_kill_filter(_type="replica")

    def resume(self, port: int) -> None:
        """SIGCONT a node :meth:`cut_off` stopped."""
        self.processes[port].send_signal(signal.SIGCONT)

    def wait_failover(self, old: int, timeout: float = 60) -> float:
        """Seconds until the sentinels name another primary than ``old``.

        Raises:
            TimeoutError: they did not within ``timeout``.
        """
        started = time.monotonic()
        wait_until(lambda: self.primary_port() != old, timeout, "no failover")
        return time.monotonic() - started

    def stop(self) -> None:
        for process in self.processes.values():
            if process.poll() is None:
                process.terminate()
        for process in self.processes.values():
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
