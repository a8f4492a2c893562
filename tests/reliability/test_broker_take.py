"""The broker takes a run and records it in one step (tasks/broker): nothing is lost between.

Kombu's Redis transport took with ``BRPOP`` and recorded the run as unacknowledged only once
the reply reached the worker; the chaos soak lost runs to workers killed, cut off or losing
Redis in between. These tests kill a real consumer process at exactly that point, and check
the doorbells idle consumers wait on.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from kombu import Connection
from kombu.transport import redis as kombu_redis

from evalfleet.tasks import broker
from evalfleet.tasks.queueing import transport_options
from evalfleet.tasks.redis_keys import doorbell_key
from evalfleet.workers.devtools.local_fleet import RedisServer

ROOT = Path(__file__).resolve().parents[2]
QUEUE = "evalfleet.take-test"
#: A consumer that takes one message and dies before reading the reply: its channel's
#: read of the take's reply never returns (argv: Redis URL, "evalfleet" or "kombu").
TAKER = """
import sys, time
from kombu import Connection
from kombu.transport import redis as kombu_redis
from evalfleet.tasks import broker
from evalfleet.tasks.queueing import transport_options
if sys.argv[2] == "evalfleet":
    broker.install()
kombu_redis.Transport.Channel._brpop_read = lambda self, **kw: time.sleep(3600)
with Connection(sys.argv[1], transport_options=transport_options(1)) as conn:
    conn.SimpleQueue(sys.argv[3]).get(timeout=3600)
"""


@pytest.fixture
def evalfleet_channel() -> Iterator[None]:
    """This process's Redis connections use evalfleet's channel (as workers and senders do)."""
    before = kombu_redis.Transport.Channel
    broker.install()
    yield
    kombu_redis.Transport.Channel = before


def _wait(condition: Any, within_s: float, what: str) -> None:
    deadline = time.monotonic() + within_s
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def _killed_mid_take(url: str, channel: str) -> redis.Redis:
    """Run :data:`TAKER` on one queued message and SIGKILL it once Redis has handed the
    message over (its list is empty)."""
    server = redis.Redis.from_url(url)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    taker = subprocess.Popen([sys.executable, "-c", TAKER, url, channel, QUEUE], env=env)
    try:
        _wait(lambda: server.llen(QUEUE) == 0, 30, "the consumer never took the message")
    finally:
        taker.send_signal(signal.SIGKILL)
        taker.wait(10)
    return server


def test_kombus_take_loses_a_run_whose_consumer_dies_before_the_reply(
        private_redis: RedisServer) -> None:
    """The hole, shown on kombu's own channel (so that the next test can fail): the
    message left its list and was never recorded."""
    with Connection(private_redis.url, transport_options=transport_options(1)) as conn:
        conn.SimpleQueue(QUEUE).put({"run": 1})

    server = _killed_mid_take(private_redis.url, "kombu")

    assert (server.llen(QUEUE), server.hlen("unacked")) == (0, 0)


def test_a_run_whose_consumer_dies_before_the_reply_comes_back(
        private_redis: RedisServer, evalfleet_channel: None) -> None:
    """Evalfleet's take recorded the run as it took it: it waits in the unacked hash, and
    the visibility sweep gives it back to the next consumer, marked redelivered."""
    with Connection(private_redis.url, transport_options=transport_options(1)) as conn:
        conn.SimpleQueue(QUEUE).put({"run": 1})

    server = _killed_mid_take(private_redis.url, "evalfleet")

    assert (server.llen(QUEUE), server.hlen("unacked")) == (0, 1)
    time.sleep(1.1)  # past the visibility timeout of 1 s
    with Connection(private_redis.url, transport_options=transport_options(1)) as conn:
        conn.default_channel.qos.restore_visible(num=10, interval=0)
        message = conn.SimpleQueue(QUEUE).get(timeout=10)
        message.ack()
    assert (message.payload, message.delivery_info["redelivered"]) == ({"run": 1}, True)
    assert (server.llen(QUEUE), server.hlen("unacked")) == (0, 0)


def test_a_run_sent_to_an_idle_consumer_rings_its_doorbell(
        private_redis: RedisServer, evalfleet_channel: None) -> None:
    """An idle consumer waits on the doorbell, not on a timer: with a 60-second wait it
    still gets a run sent meanwhile at once (within 20 s, or the test fails)."""
    options = transport_options(3600)
    got: list[Any] = []
    with Connection(private_redis.url, transport_options=options) as conn:
        conn.transport.brpop_timeout = 60  # each wait on the doorbell: up to 60 s
        queue = conn.SimpleQueue(QUEUE)
        consumer = threading.Thread(target=lambda: got.append(queue.get(timeout=20)))
        consumer.start()
        server = redis.Redis.from_url(private_redis.url)
        _wait(lambda: any(c["cmd"] == "brpop" for c in server.client_list()), 10,
              "the consumer never waited on the doorbell")
        with Connection(private_redis.url, transport_options=options) as sender:
            sender.SimpleQueue(QUEUE).put({"run": 2})
        consumer.join(30)
    assert [m.payload for m in got] == [{"run": 2}]


def test_a_run_queued_without_a_doorbell_is_found_within_the_wait(
        private_redis: RedisServer, evalfleet_channel: None) -> None:
    """A run a sender queued without ringing (kombu's own channel) is taken by the next
    take, at most one ``brpop_timeout`` (1 s) after it was queued."""
    server = redis.Redis.from_url(private_redis.url)
    with Connection(private_redis.url, transport_options=transport_options(3600)) as conn:
        conn.SimpleQueue(QUEUE).put({"run": 3})
        server.delete(doorbell_key(QUEUE))  # as if sent by kombu's channel
        message = conn.SimpleQueue(QUEUE).get(timeout=10)
    assert message.payload == {"run": 3}


def test_takes_follow_priority_and_an_empty_queue_clears_its_doorbell(
        private_redis: RedisServer, evalfleet_channel: None) -> None:
    """The most urgent run is taken first (as kombu's ``BRPOP`` over the priority lists),
    and once a take finds the queue empty its doorbell tokens are gone."""
    server = redis.Redis.from_url(private_redis.url)
    with Connection(private_redis.url, transport_options=transport_options(3600)) as conn:
        queue = conn.SimpleQueue(QUEUE)
        for run, priority in ((1, 9), (2, 0), (3, 5)):
            queue.put({"run": run}, priority=priority)
        assert server.llen(doorbell_key(QUEUE)) == 3
        taken = [queue.get(timeout=10) for _ in range(3)]
        for message in taken:
            message.ack()
        with pytest.raises(queue.Empty):
            queue.get(timeout=1.5)
    assert [m.payload["run"] for m in taken] == [2, 3, 1]  # kombu: lower number first
    assert (server.exists(doorbell_key(QUEUE)), server.hlen("unacked")) == (0, 0)


def test_queues_outside_evalfleets_keep_kombus_way(
        private_redis: RedisServer, evalfleet_channel: None) -> None:
    """Another Celery app in the same process is untouched: no doorbell on its queues."""
    server = redis.Redis.from_url(private_redis.url)
    with Connection(private_redis.url) as conn:
        queue = conn.SimpleQueue("celery")
        queue.put({"job": 1})
        message = queue.get(timeout=10)
        message.ack()
    assert message.payload == {"job": 1}
    assert server.keys("evalfleet:doorbell:*") == []
