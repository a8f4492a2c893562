"""The webhook tests' Redis: a private one per test (the schedule's keys are the fleet's,
not per run)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis as redis_lib
from services import missing_service

from evalfleet.workers.devtools.local_fleet import RedisServer, free_port


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RedisServer]:
    """A private Redis per test: the schedule's keys are the fleet's, not per run."""
    if shutil.which("redis-server") is None:
        missing_service("redis-server", FileNotFoundError("not on PATH (scripts/setup.sh)"))
    started = RedisServer(free_port(), tmp_path).start()
    yield started
    started.stop()


@pytest.fixture
def redis(server: RedisServer) -> Iterator[Any]:
    client = redis_lib.Redis.from_url(server.url)
    yield client
    client.close()


