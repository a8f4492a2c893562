"""The warm pool: takes create nothing on the run's path, containers are never reused."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Iterator
from typing import Any

import docker.errors
import pytest
from sandbox_support import TEST_LABELS, WORKER, profile, wait_for

from evalfleet.sandbox.command import Command
from evalfleet.sandbox.docker.factory import DockerFactory
from evalfleet.sandbox.docker.pool import WarmPool
from evalfleet.sandbox.profile import Profile


class CountingFactory(DockerFactory):
    """Counts container starts per thread."""

    def __init__(self, client: Any) -> None:
        super().__init__(client, worker=WORKER, extra_labels=TEST_LABELS)
        self.starts: dict[int, int] = {}

    def start(self, *args: Any, **kwargs: Any) -> Any:
        ident = threading.get_ident()
        self.starts[ident] = self.starts.get(ident, 0) + 1
        return super().start(*args, **kwargs)


@pytest.fixture
def busybox(runtime: str) -> Profile:
    """The pooled profile, on the test's runtime."""
    return profile("busybox", runtime)


@pytest.fixture
def counting(docker_client: Any) -> CountingFactory:
    return CountingFactory(docker_client)


@pytest.fixture
def pool(busybox: Profile, counting: CountingFactory) -> Iterator[WarmPool]:
    warm = WarmPool(counting, [(busybox, 2)]).start()
    yield warm
    warm.close()


def test_warm_take_creates_no_container_on_the_path(busybox: Profile, pool: WarmPool,
                                                    counting: CountingFactory) -> None:
    """With the pool full, acquire starts nothing on the caller's thread; it is a hit."""
    wait_for(lambda: pool.stats()[0].idle == 2)
    with pool.acquire(busybox, run_id="warm-take") as sandbox:
        assert counting.starts.get(threading.get_ident(), 0) == 0
        assert sandbox.exec(Command("echo warm")).stdout == b"warm\n"
    stats = pool.stats()[0]
    assert (stats.hits, stats.misses, stats.target) == (1, 0, 2)
    wait_for(lambda: pool.stats()[0].idle == 2)  # refilled in the background


def test_containers_are_never_reused(busybox: Profile, pool: WarmPool,
                                     docker_client: Any) -> None:
    """Every take gets a new container; a closed one is gone from the engine."""
    seen: list[str] = []
    for index in range(4):
        wait_for(lambda: pool.stats()[0].idle >= 1)
        sandbox = pool.acquire(busybox, run_id=f"reuse-{index}")
        sandbox.write_files([])
        assert sandbox.exec(Command("ls /workspace")).stdout == b""  # never used before
        sandbox.exec(Command("echo used > /workspace/mark"))
        seen.append(sandbox.id)
        sandbox.close()
        with pytest.raises(docker.errors.NotFound):
            docker_client.containers.get(sandbox.id)
    assert len(set(seen)) == 4


def test_other_profile_is_a_cold_miss(busybox: Profile, pool: WarmPool,
                                      counting: CountingFactory) -> None:
    """A profile that differs from the pooled one (same name) gets a cold sandbox."""
    wait_for(lambda: pool.stats()[0].idle == 2)
    other = dataclasses.replace(busybox, limits=dataclasses.replace(busybox.limits, pids=99))
    with pool.acquire(other, run_id="miss") as sandbox:
        assert counting.starts.get(threading.get_ident(), 0) == 1
        assert sandbox.exec(Command("true")).exit_code == 0
    assert (pool.stats()[0].hits, pool.stats()[0].misses) == (0, 1)


def test_size_zero_is_off(busybox: Profile, counting: CountingFactory) -> None:
    """Size 0 starts no thread and no container until asked; every take is cold."""
    off = WarmPool(counting, [(busybox, 0)]).start()
    try:
        assert counting.starts == {}
        with off.acquire(busybox, run_id="cold") as sandbox:
            assert sandbox.exec(Command("true")).exit_code == 0
        assert off.stats()[0].misses == 1 and off.stats()[0].idle == 0
    finally:
        off.close()


def test_stale_warm_containers_are_replaced(busybox: Profile, counting: CountingFactory,
                                            docker_client: Any) -> None:
    """A warm container idle past ``max_idle_s`` is removed and replaced."""
    now = [1000.0]
    stale = WarmPool(counting, [(busybox, 1)], max_idle_s=60, clock=lambda: now[0])
    try:
        stale.fill()
        first = stale._slots[busybox.name].idle[0].container.id
        now[0] += 61
        stale.fill()
        stats = stale.stats()[0]
        assert (stats.created, stats.discarded, stats.idle) == (2, 1, 1)
        with pytest.raises(docker.errors.NotFound):
            docker_client.containers.get(first)
    finally:
        stale.close()


def test_vanished_warm_containers_are_replaced(busybox: Profile, counting: CountingFactory,
                                               docker_client: Any) -> None:
    """A warm container removed behind the pool's back is dropped, not handed out."""
    pool = WarmPool(counting, [(busybox, 1)])
    try:
        pool.fill()
        gone = pool._slots[busybox.name].idle[0].container
        gone.remove(force=True)
        pool.fill()
        stats = pool.stats()[0]
        assert (stats.idle, stats.discarded, stats.created) == (1, 1, 2)
        with pool.acquire(busybox, run_id="after-vanish") as sandbox:
            assert sandbox.id != gone.id and sandbox.exec(Command("true")).exit_code == 0
    finally:
        pool.close()


def test_a_refill_reports_its_counters(busybox: Profile, counting: CountingFactory) -> None:
    """Each refill pass that added containers tells ``on_filled`` (the idle gauge moves
    between runs); a pass with nothing to add says nothing."""
    heard: list[list[Any]] = []
    pool = WarmPool(counting, [(busybox, 2)], on_filled=heard.append)
    try:
        pool.fill()
        pool.fill()
        assert [(s.idle, s.created) for stats in heard for s in stats] == [(2, 2)]
    finally:
        pool.close()


def test_a_warm_container_that_died_is_never_handed_out(busybox: Profile,
                                                        counting: CountingFactory) -> None:
    """A pooled container whose supervisor hung up (killed, OOM) is dropped at the take,
    before the refill thread notices: the run gets a live sandbox, not an infra error."""
    pool = WarmPool(counting, [(busybox, 2)])
    try:
        pool.fill()
        dead = pool._slots[busybox.name].idle[0]
        assert dead.channel is not None and dead.channel.open
        dead.container.kill()
        wait_for(lambda: not dead.channel.open)  # type: ignore[union-attr]
        with pool.acquire(busybox, run_id="after-death") as sandbox:
            assert sandbox.id != dead.container.id
            assert sandbox.exec(Command("echo ok")).stdout == b"ok\n"
        stats = pool.stats()[0]
        assert (stats.hits, stats.discarded) == (1, 1)
    finally:
        pool.close()
