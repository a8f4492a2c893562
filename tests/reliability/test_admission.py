"""A run's admission on a real ``redis-server``: the duplicate check and the delivery count
in one round trip (``Publisher.admit``), with Redis taking writes and with Redis full."""

from __future__ import annotations

import pytest
import redis as redis_lib
from reliability.test_redis_full import Fullness
from reliability.test_results_stream import result

from evalfleet.tasks.publish import Publisher
from evalfleet.tasks.redis_keys import deliveries_key
from evalfleet.workers.devtools.local_fleet import RedisServer

TTL_S = 3600


@pytest.fixture
def publisher(private_redis: RedisServer) -> Publisher:
    return Publisher(redis_lib.Redis.from_url(private_redis.url), ttl_s=TTL_S)


def test_each_delivery_is_counted_and_lives_as_long_as_a_result(publisher: Publisher) -> None:
    assert [publisher.admit("run-1") for _ in range(3)] == [1, 2, 3]
    assert publisher.admit("run-2") == 1
    assert 0 < publisher.redis.ttl(deliveries_key("run-1")) <= TTL_S


def test_a_published_run_is_a_duplicate_and_not_counted(publisher: Publisher) -> None:
    assert publisher.admit("run-1") == 1
    done = result("run-1")
    assert publisher.publish(done, done.to_json())

    assert publisher.admit("run-1") == 0
    assert publisher.redis.get(deliveries_key("run-1")) == b"1"


def test_a_full_redis_still_knows_a_duplicate_but_refuses_to_count(
        publisher: Publisher) -> None:
    """Redis past maxmemory: a published run is still recognised (nothing to write); an
    unpublished one is refused (the task waits for memory) and leaves no count behind."""
    done = result("published")
    assert publisher.publish(done, done.to_json())
    full = Fullness(publisher.redis)
    full.fill()

    assert publisher.admit("published") == 0
    with pytest.raises(redis_lib.OutOfMemoryError):
        publisher.admit("fresh")
    assert publisher.redis.exists(deliveries_key("fresh")) == 0
    full.free()
    assert publisher.admit("fresh") == 1
