"""Fault-injection fixtures: a private Redis and fleet per test, and a leak check after it.

Every test here gets its own ``redis-server`` (so it may restart it, fill it, or cut it
off) and so its own fleet label (``evalfleet.fleet``, derived from the Redis location):
after the test, every worker is stopped and any container still carrying that label is a
leak — removed, and the test fails.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import redis as redis_lib
from services import missing_service

from tasks.messages import RunRequest
from workers.localfleet import RedisServer, Starter, WorkerNode, free_port
from workers.worker import FLEET_KEY

FLEET_LABEL = "evalfleet.fleet"
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

    def client(self, url: str | None = None) -> Any:
        from tasks.client import EvalfleetClient

        made = EvalfleetClient(url or self.redis.url)
        self.clients.append(made)
        return made

    def containers(self, **labels: str) -> list[Any]:
        wanted = [f"{FLEET_LABEL}={self.label}", *(f"{k}={v}" for k, v in labels.items())]
        return list(self.docker.containers.list(all=True, filters={"label": wanted}))

    def results_streamed(self, run_ids: set[str]) -> dict[str, int]:
        """How many times each run id appears on the results stream."""
        counts = dict.fromkeys(run_ids, 0)
        redis = self.clients[0].redis if self.clients else self.client().redis
        for _, fields in redis.xrange("evalfleet:results"):
            run_id = fields[b"run_id"].decode()
            if run_id in counts:
                counts[run_id] += 1
        return counts


def _redis_available() -> None:
    if shutil.which("redis-server") is None:
        missing_service("redis-server", FileNotFoundError("not on PATH (scripts/setup.sh)"))


@pytest.fixture
def private_fleet(docker_client: Any, tmp_path: Path) -> Iterator[PrivateFleet]:
    """A fleet on its own Redis (AOF on); workers stopped and containers checked after."""
    from workers.settings import Settings

    _redis_available()
    redis = RedisServer(free_port(), tmp_path, appendonly=True).start()
    label = Settings(redis_url=redis.url).fleet_label
    with redis_lib.Redis.from_url(redis.url) as plain:
        plain.set(FLEET_KEY, label)  # the workers of this fleet adopt it (SET NX finds it)
    starter = Starter(redis.url, tmp_path, **TEST_WORKER_SETTINGS)
    made = PrivateFleet(redis, starter, docker_client, label)
    try:
        yield made
    finally:
        starter.stop_all()
        for client in made.clients:
            with contextlib.suppress(Exception):
                client.close()
        redis.stop()
        leaked = made.containers()
        for container in leaked:
            with contextlib.suppress(Exception):
                container.remove(force=True)
    assert not leaked, f"containers left behind: {[c.name for c in leaked]}"


def log_of(node: WorkerNode) -> str:
    return node.log.read_text(errors="replace")


def dump(data: Any) -> str:
    return json.dumps(data)
