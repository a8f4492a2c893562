"""The archive's integration tests: a Redis of each test's own (the archive's group on the
results stream changes how every result is published there) and the session's SeaweedFS."""

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
def own_redis(tmp_path: Path) -> Iterator[RedisServer]:
    """A ``redis-server`` of the test's own."""
    if shutil.which("redis-server") is None:
        missing_service("redis-server", FileNotFoundError("not on PATH (scripts/setup.sh)"))
    server = RedisServer(free_port(), tmp_path).start()
    yield server
    server.stop()


@pytest.fixture
def plain(own_redis: RedisServer) -> Iterator[Any]:
    """A plain client of the test's Redis."""
    with redis_lib.Redis.from_url(own_redis.url) as made:
        yield made
