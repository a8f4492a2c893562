"""Fault-injection fixtures: a private Redis and fleet per test, and a leak check after it.

Every test here gets its own ``redis-server`` (so it may restart it, fill it, or cut it
off) and so its own fleet label (``evalfleet.fleet``, derived from the Redis location):
after the test, every worker is stopped and any container still carrying that label is a
leak — removed, and the test fails.
"""

from __future__ import annotations

import contextlib
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis as redis_lib
from fleet_support import (
    TEST_WORKER_SETTINGS,
    Host,
    PrivateFleet,
    SocketProxy,
    namespaces_available,
    network_host,
)
from services import missing_service

from evalfleet.sandbox.docker.labels import LABEL_RUN
from evalfleet.sandbox.docker.listing import labels_of, name_of, state_of
from evalfleet.tasks.redis_keys import FLEET_KEY
from evalfleet.workers.devtools.local_fleet import RedisServer, Starter, free_port


def _redis_available() -> None:
    if shutil.which("redis-server") is None:
        missing_service("redis-server", FileNotFoundError("not on PATH (scripts/setup.sh)"))


@pytest.fixture
def private_fleet(docker_client: Any, tmp_path: Path) -> Iterator[PrivateFleet]:
    """A fleet on its own Redis (AOF on); workers stopped and containers checked after."""
    from evalfleet.workers.settings import Settings

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
        leaked = _settled(made)
        described = [_described(c) for c in leaked]
        for container in leaked:
            with contextlib.suppress(Exception):
                container.remove(force=True)
    assert not leaked, (f"containers left behind: {described}; what the workers said of "
                        f"removals: {_removal_lines(tmp_path)}")


def _described(container: Any) -> str:
    """A leaked container as a failure should name it: its name, state and run."""
    return (f"{name_of(container)} ({state_of(container)}, "
            f"run {labels_of(container).get(LABEL_RUN, '?')})")


def _removal_lines(workdir: Path) -> list[str]:
    """The workers' log lines about removing sandboxes (why one may have stayed)."""
    return [line.strip()[:400] for log in sorted(workdir.glob("*.log"))
            for line in log.read_text(errors="replace").splitlines()
            if "remov" in line and "sandbox" in line]


def _settled(fleet: PrivateFleet, within_s: float = 30.0, removing_s: float = 120.0) -> list[Any]:
    """The fleet's containers once removals the workers started have finished (a gVisor
    sandbox can take seconds to go); what is still there after ``within_s`` is a leak, but
    for containers the engine is still removing (state ``removing``: asked for, under way;
    on a slow machine a sandbox torn down under a fork bomb can take a minute), which get
    up to ``removing_s``."""
    started = time.monotonic()
    while left := fleet.containers():
        waited = time.monotonic() - started
        if waited > removing_s or (waited > within_s and
                                   any(state_of(c) != "removing" for c in left)):
            break
        time.sleep(0.5)
    return left


@pytest.fixture
def private_redis(tmp_path: Path) -> Iterator[RedisServer]:
    """A ``redis-server`` of the test's own, without workers or Docker."""
    _redis_available()
    server = RedisServer(free_port(), tmp_path).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def engine_proxy(tmp_path: Path, docker_client: object) -> Iterator[SocketProxy]:
    """A cuttable unix-socket forwarder to the Docker engine (``docker_url`` of a worker)."""
    proxy = SocketProxy(tmp_path / "docker.sock")
    yield proxy
    proxy.close()


@pytest.fixture
def worker_host() -> Iterator[Host]:
    """A namespace + veth (removed after the test; the test fails if any is left)."""
    namespaces_available()
    with network_host() as host:
        yield host
