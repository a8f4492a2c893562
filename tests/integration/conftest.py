"""Real services for integration tests: a Redis server process and evalfleet worker nodes.

Everything listens on loopback ports picked at random; every process started here is
stopped at the end of its fixture.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from services import missing_service

from evalfleet.workers.devtools.local_fleet import RedisServer, Starter, WorkerNode, free_port

TEST_WORKER_SETTINGS = {"retry_backoff_s": "0.2", "heartbeat_interval_s": "0.5",
                        "heartbeat_ttl_s": "3"}


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """One private Redis for the session (tests use unique keys, never FLUSHALL)."""
    if shutil.which("redis-server") is None:
        missing_service("redis-server", FileNotFoundError("not on PATH (scripts/setup.sh)"))
    server = RedisServer(free_port(), tmp_path_factory.mktemp("redis")).start()
    yield server
    server.stop()


@pytest.fixture
def start_worker(redis_server: RedisServer, docker_client: Any,
                 tmp_path: Path) -> Iterator[Starter]:
    """Start worker nodes for one test (``start_worker("w", queues='["default"]')``)."""
    starter = Starter(redis_server.url, tmp_path, **TEST_WORKER_SETTINGS)
    yield starter
    starter.stop_all()


@pytest.fixture(scope="module")
def fleet(redis_server: RedisServer, docker_client: Any,
          tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[WorkerNode]]:
    """Two worker nodes (one pool process each) shared by a test module."""
    starter = Starter(redis_server.url, tmp_path_factory.mktemp("fleet"), **TEST_WORKER_SETTINGS)
    nodes = [starter("fleet"), starter("fleet")]
    yield nodes
    starter.stop_all()


@pytest.fixture
def sender(redis_server: RedisServer) -> Any:
    """A Celery app sending ``evalfleet.run`` straight to the queues (bodies the clients
    would refuse, duplicates), as the intake's forwarder does."""
    from evalfleet.tasks.platform.intake import sender_app

    return sender_app(redis_server.url)


@pytest.fixture
def client(redis_server: RedisServer) -> Iterator[Any]:
    """An EvalfleetClient on the private Redis."""
    from evalfleet.tasks.platform import EvalfleetClient

    found = EvalfleetClient(redis_server.url)
    yield found
    found.close()
