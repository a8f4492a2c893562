"""Redis restarted (AOF on) while runs are queued and in flight."""

from __future__ import annotations

import time

import redis
from fleet_support import PrivateFleet, run_request
from kombu import Connection

from evalfleet.tasks import broker
from evalfleet.workers.devtools.local_fleet import RedisServer


def test_redis_restart_with_runs_queued_and_in_flight(private_fleet: PrivateFleet) -> None:
    """Redis goes away for a few seconds and comes back from its append-only file: every
    run gets exactly one scorecard, and the workers resume consuming by themselves."""
    settings = {"visibility_timeout_s": "20"}
    nodes = [private_fleet.start("aof", ["-c", "2"], **settings) for _ in range(2)]
    client = private_fleet.client()
    requests = [run_request("aof", "sleep 2; echo hi") for _ in range(12)]
    client.submit_many(requests)
    time.sleep(3)  # some runs finished, some in flight, most still queued
    published_before = sum(1 for r in requests if client.result(r.run_id) is not None)

    private_fleet.redis.stop()  # SIGTERM: Redis fsyncs its AOF on the way out
    time.sleep(3)
    private_fleet.redis.start()
    after = [run_request("after-restart") for _ in range(2)]
    client.submit_many(after)

    results = [client.wait(r.run_id, timeout=180) for r in requests + after]

    assert published_before < len(requests)  # the restart did catch runs queued
    assert [r.outcome for r in results] == ["scored"] * len(results)
    counts = private_fleet.results_streamed({r.run_id for r in requests + after})
    assert set(counts.values()) == {1}
    assert all(node.alive for node in nodes)


def test_a_channel_closed_after_its_connection_was_released_keeps_its_runs(
        private_redis: RedisServer) -> None:
    """Found by the chaos soak: Redis restarted while a worker held a delivered, unacked run.
    Celery drops the broken connection (kombu clears its transport's client) and then the
    channel, closing, tried to give the run back through it — AttributeError, "Unrecoverable
    error", the worker died. Now the run stays in the unacked hash for the sweep."""
    broker.install()
    with Connection(private_redis.url) as connection:
        queue = connection.SimpleQueue("evalfleet.restore-test")
        queue.put({"run": 1})
        queue.get(timeout=10)  # delivered, not acknowledged
        connection.transport.client = None  # what Connection._do_close_transport does

        queue.channel.close()  # raised AttributeError ('NoneType' … 'hostname')

    with redis.Redis(port=private_redis.port) as server:
        assert (server.hlen("unacked"), server.llen("evalfleet.restore-test")) == (1, 0)
