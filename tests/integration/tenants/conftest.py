"""The tenants' tests: a Redis of each test's own (a tenant's keys, users and the fleet's
forwarders are the test's alone), its admin client, tenants made on it, and worker nodes
on it."""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import redis as redis_lib
from services import missing_service

from evalfleet.tasks import tenancy
from evalfleet.tasks.platform import EvalfleetClient
from evalfleet.workers.devtools.local_fleet import RedisServer, Starter, free_port

WORKER_SETTINGS = {"retry_backoff_s": "0.2", "heartbeat_interval_s": "0.5",
                   "heartbeat_ttl_s": "3"}


@dataclass
class Tenant:
    name: str
    url: str
    client: EvalfleetClient


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RedisServer]:
    if shutil.which("redis-server") is None:
        missing_service("redis-server", FileNotFoundError("not on PATH (scripts/setup.sh)"))
    started = RedisServer(free_port(), tmp_path).start()
    yield started
    started.stop()


@pytest.fixture
def admin(server: RedisServer) -> Iterator[Any]:
    """The fleet's own client (the default user: every right)."""
    client = redis_lib.Redis.from_url(server.url)
    yield client
    client.close()


@pytest.fixture
def tenants(admin: Any, server: RedisServer) -> Iterator[Callable[[str], Tenant]]:
    """Make a tenant (``tenants("acme")``: a unique name starting so) and its client."""
    made: list[Tenant] = []

    def make(prefix: str) -> Tenant:
        name = f"{prefix}-{uuid.uuid4().hex[:8]}"
        record, password = tenancy.add(admin, [admin], name)
        url = f"redis://{record.user}:{password}@127.0.0.1:{server.port}/0"
        made.append(Tenant(name, url, EvalfleetClient(url)))
        return made[-1]

    yield make
    for each in made:
        each.client.close()


@pytest.fixture
def start_worker(server: RedisServer, docker_client: Any,
                 tmp_path: Path) -> Iterator[Starter]:
    """Worker nodes on the test's Redis."""
    starter = Starter(server.url, tmp_path, **WORKER_SETTINGS)
    yield starter
    starter.stop_all()
