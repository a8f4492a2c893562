"""Redis full: ``maxmemory`` reached under ``noeviction`` (the documented policy).

Each test's own ``redis-server`` gets a small ``maxmemory`` (16 MiB above what it holds)
and is then filled past it by a ballast key (written by a script flagged ``allow-oom``, so
the ballast is certain to exceed the limit by 8 MiB: every write that needs memory is
refused until the ballast is deleted, which is "memory coming back").
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import redis as redis_lib
from fleet_support import run_request

from tasks.client import EvalfleetClient, SubmitError
from tasks.queueing import PRIORITY_STEPS, queue_for
from workers.localfleet import RedisServer

MiB = 1024 * 1024
BALLAST = "test:ballast"
_WRITE_BALLAST = """#!lua flags=allow-oom
return redis.call('SET', KEYS[1], string.rep('x', tonumber(ARGV[1])))
"""


class Fullness:
    """Makes a Redis full (past ``maxmemory``, ``noeviction``) and frees it again."""

    def __init__(self, client: Any) -> None:
        self.redis = client
        used = int(client.info("memory")["used_memory"])
        client.config_set("maxmemory-policy", "noeviction")
        client.config_set("maxmemory", str(used + 16 * MiB))

    def fill(self) -> None:
        self.redis.eval(_WRITE_BALLAST, 1, BALLAST, 24 * MiB)
        with pytest.raises(redis_lib.OutOfMemoryError):
            self.redis.set("test:probe", "x")

    def free(self) -> None:
        self.redis.delete(BALLAST)
        self.redis.set("test:probe", "x")  # takes writes again


def queued(client: Any) -> int:
    """Runs waiting in the default queue (all its priority lists)."""
    name = queue_for("default")
    lists = [name] + [f"{name}:{step}" for step in PRIORITY_STEPS[1:]]
    return sum(int(client.llen(key)) for key in lists)


@pytest.fixture
def client(private_redis: RedisServer) -> Iterator[EvalfleetClient]:
    made = EvalfleetClient(private_redis.url)
    yield made
    made.close()


def test_submit_to_a_full_redis_fails_clearly_and_enqueues_nothing(
        client: EvalfleetClient) -> None:
    """A submission Redis refuses raises SubmitError naming every run not enqueued and
    saying why; nothing is half-queued; once memory is back the same runs go through."""
    full = Fullness(client.redis)
    first, second = run_request("full"), run_request("full")
    full.fill()

    with pytest.raises(SubmitError) as raised:
        client.submit_many([first, second])

    assert (raised.value.enqueued, raised.value.not_enqueued) == ([], [first.run_id,
                                                                     second.run_id])
    assert "Redis is full (maxmemory, noeviction)" in str(raised.value)
    assert first.run_id in str(raised.value) and second.run_id in str(raised.value)
    assert queued(client.redis) == 0
    full.free()
    assert client.submit_many([first, second]) == [first.run_id, second.run_id]
    assert queued(client.redis) == 2
