"""Redis full: ``maxmemory`` reached under ``noeviction`` (the documented policy).

Each test's own ``redis-server`` gets a small ``maxmemory`` (16 MiB above what it holds)
and is then filled past it by a ballast key (written by a script flagged ``allow-oom``, so
the ballast is certain to exceed the limit by 8 MiB: every write that needs memory is
refused until the ballast is deleted, which is "memory coming back").
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from typing import Any

import pytest
import redis as redis_lib
from fleet_support import (
    PrivateFleet,
    children,
    cpu_seconds,
    log_of,
    metric,
    run_request,
    wait_for,
)
from kombu.exceptions import BatchPublishError, OperationalError

from evalfleet.tasks.platform import EvalfleetClient, SubmitError
from evalfleet.tasks.platform.intake import IntakeForwarder, sender_app
from evalfleet.tasks.queueing import PRIORITY_STEPS, queue_for
from evalfleet.tasks.redis_keys import INTAKE_GROUP, INTAKE_STREAM
from evalfleet.workers.devtools.local_fleet import RedisServer

MiB = 1024 * 1024
BALLAST = "test:ballast"
_WRITE_BALLAST = """#!lua flags=allow-oom
return redis.call('SET', KEYS[1], string.rep('x', tonumber(ARGV[1])))
"""
#: Seconds Redis stays full while the workers are watched (nothing may crash or spin).
HOLD_S = 10.0
#: The patience's shortest wait between two tries of a refused step (tasks/patience.py).
SHORTEST_WAIT_S = 0.5


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


def submitted(client: Any) -> int:
    """Runs the clients added to the intake stream (no forwarder runs in these tests)."""
    return int(client.xlen(INTAKE_STREAM))


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
    assert submitted(client.redis) == 0
    assert client.status(first.run_id) is None
    full.free()
    assert client.submit_many([first, second]) == [first.run_id, second.run_id]
    assert submitted(client.redis) == 2
    assert client.status(first.run_id).status == "queued"


def test_a_pipelined_submission_to_a_full_redis_names_every_run_not_enqueued(
        client: EvalfleetClient) -> None:
    """submit_batch: the runs Redis refuses and every later one are not enqueued (Redis
    said so for each: none is uncertain); the earlier round trip's are."""
    full = Fullness(client.redis)
    requests = [run_request("full") for _ in range(3)]
    ids = [r.run_id for r in requests]
    sent = client.submit_batch(requests[:2], chunk=2)
    full.fill()

    with pytest.raises(SubmitError) as raised:
        client.submit_batch([*requests[2:], run_request("full")], chunk=1)

    assert sent == ids[:2]
    assert raised.value.enqueued == []
    assert raised.value.uncertain == []
    assert raised.value.not_enqueued[0] == ids[2] and len(raised.value.not_enqueued) == 2
    assert "Redis is full (maxmemory, noeviction)" in str(raised.value)
    assert submitted(client.redis) == 2
    full.free()


def test_a_full_redis_holds_runs_and_loses_none_once_memory_is_back(
        private_fleet: PrivateFleet) -> None:
    """Redis fills up while two workers run and three runs wait. The workers keep their
    results and retry the refused publications with backoff (no crash, no spin). Within
    30 s of memory coming back both results are published — not after the visibility
    timeout (3600 s) — and the waiting runs follow: every run is scored on its first
    delivery, once."""
    nodes = [private_fleet.start("full", ["-c", "1"]) for _ in range(2)]
    client = private_fleet.client()
    full = Fullness(client.redis)
    running = [run_request("busy", "sleep 4; echo hi") for _ in range(2)]
    waiting = [run_request("waiting") for _ in range(3)]
    client.submit_many(running)
    wait_for(lambda: all(private_fleet.containers(**{"evalfleet.run_id": r.run_id})
                         for r in running), 60, "both runs did not start")
    client.submit_many(waiting)  # both workers are busy: these wait in the queue

    full.fill()
    wait_for(lambda: all(metric(n, "evalfleet_redis_refusals_total", step="publication")
                         for n in nodes), 60, "no publication was refused")
    before = ([cpu_seconds(n) for n in nodes], [_refusals(n) for n in nodes])
    started = time.monotonic()
    time.sleep(HOLD_S)  # Redis stays full
    held = time.monotonic() - started
    after = ([cpu_seconds(n) for n in nodes], [_refusals(n) for n in nodes])
    full.free()

    wait_for(lambda: all(client.result(r.run_id) for r in running), 30,
             "the held results were not published after memory came back")
    results = [client.wait(r.run_id, timeout=120) for r in running + waiting]

    assert [(r.outcome, r.attempt) for r in results] == [("scored", 1)] * 5
    assert all(r.scorecard is not None and r.scorecard.score == 1000 for r in results)
    counts = private_fleet.results_streamed({r.run_id for r in running + waiting})
    assert set(counts.values()) == {1}
    for cpu_then, cpu_now in zip(before[0], after[0], strict=True):
        assert cpu_now - cpu_then < 0.25 * held  # waiting, not spinning
    for tries_then, tries_now in zip(before[1], after[1], strict=True):
        assert tries_now - tries_then <= held / SHORTEST_WAIT_S + 1
    for node in nodes:
        assert node.alive and "Unrecoverable error" not in log_of(node)


def test_a_pool_process_killed_while_redis_is_full_loses_nothing(
        private_fleet: PrivateFleet) -> None:
    """The pool process holding a refused publication is SIGKILLed while Redis is full:
    the requeue goes through anyway (not after the visibility timeout), the worker lives,
    and once memory is back the run is scored on its second delivery, once."""
    node = private_fleet.start("killfull", ["-c", "1"])
    client = private_fleet.client()
    full = Fullness(client.redis)
    request = run_request("killfull", "sleep 3; echo hi")
    client.submit(request)
    wait_for(lambda: private_fleet.containers(**{"evalfleet.run_id": request.run_id}), 60,
             "the run did not start")
    full.fill()
    wait_for(lambda: metric(node, "evalfleet_redis_refusals_total", step="publication"), 60,
             "the publication was not refused")
    assert node.process is not None
    (child,) = children(node.process.pid)
    os.kill(child, signal.SIGKILL)
    wait_for(lambda: metric(node, "evalfleet_redis_refusals_total", step="delivery"), 60,
             "the requeued run was not delivered again")
    full.free()

    result = client.wait(request.run_id, timeout=60)

    assert (result.outcome, result.attempt) == ("scored", 2)
    assert private_fleet.results_streamed({request.run_id}) == {request.run_id: 1}
    assert node.alive and "Unrecoverable error" not in log_of(node)


def test_a_worker_started_while_redis_is_full_waits_for_memory_then_serves(
        private_fleet: PrivateFleet) -> None:
    """A worker that starts (a restart, a scale-up) while Redis is full stays up and says it
    waits, takes nothing off the queue, and serves once memory is back. (Celery's own
    start-up writes made it exit before, again and again.)"""
    client = private_fleet.client()
    full = Fullness(client.redis)
    request = run_request("late")
    client.submit(request)
    full.fill()

    node = private_fleet.launch("late", ["-c", "1"])
    wait_for(lambda: "waiting for memory before taking runs" in log_of(node) or not node.alive,
             60, "the worker did not say it waits")
    assert node.alive and " ready." not in log_of(node)
    assert queued(client.redis) + submitted(client.redis) == 1  # in the intake: no forwarder
    full.free()
    node.wait_ready(60)
    result = client.wait(request.run_id, timeout=60)

    assert (result.outcome, result.attempt) == ("scored", 1)
    assert node.alive


def test_intake_entries_a_full_redis_kept_from_the_queue_are_forwarded_first(
        client: EvalfleetClient, private_redis: RedisServer) -> None:
    """The forwarder reads intake entries (allowed on a full Redis) but cannot queue them:
    they stay pending, and are the first thing it forwards once memory is back (they used
    to wait for the 60 s reclaim)."""
    full = Fullness(client.redis)
    forwarder = IntakeForwarder(client.redis, sender_app(private_redis.url), consumer="w1")
    forwarder.ensure_group()
    for _ in range(2):
        client.redis.xadd(INTAKE_STREAM, {"request": run_request("intake").model_dump_json()})
    full.fill()

    with pytest.raises((OperationalError, BatchPublishError, redis_lib.OutOfMemoryError)):
        forwarder.forward_once(block_ms=10)
    assert queued(client.redis) == 0
    full.free()

    assert forwarder.forward_once(block_ms=10) == 2
    assert queued(client.redis) == 2
    assert client.redis.xpending(INTAKE_STREAM, INTAKE_GROUP)["pending"] == 0
    assert submitted(client.redis) == 0  # forwarded entries leave the stream


def test_a_run_id_submitted_again_is_queued_once(client: EvalfleetClient,
                                                 private_redis: RedisServer) -> None:
    """Intake entries are idempotent by run id (a platform unsure after a failover submits
    again): a client's second submission adds nothing; of two entries added by plain XADD,
    the forwarder queues the first and drops the other; a forwarder that re-reads an entry
    it had not acknowledged still sends it."""
    forwarder = IntakeForwarder(client.redis, sender_app(private_redis.url), consumer="w1")
    forwarder.ensure_group()
    twice, plain = run_request("twice"), run_request("plain")
    client.submit(twice)
    client.submit(twice)
    assert submitted(client.redis) == 1
    for _ in range(2):
        client.redis.xadd(INTAKE_STREAM, {"request": plain.model_dump_json()})

    assert forwarder.forward_once(block_ms=10) == 3
    assert queued(client.redis) == 2 and submitted(client.redis) == 0
    entry = client.redis.hget(f"evalfleet:status:{plain.run_id}", "entry")
    assert forwarder.lifecycle.queue(plain.run_id, None, None, entry.decode()) == 2


def _refusals(node: Any) -> float:
    return sum(metric(node, "evalfleet_redis_refusals_total", step=step)
               for step in ("delivery", "retry", "publication"))


def test_a_forwarder_killed_between_send_and_acknowledgement_sends_once(
        client: EvalfleetClient, private_redis: RedisServer) -> None:
    """The forwarder dies after queueing an entry's run and before acknowledging the entry
    (its stream still holds it, pending): the next forwarder reads it again and queues
    nothing: the run's record says which entry's message was queued, written in the same
    step as the message (tasks.broker.lua.PUT_ONCE). The run is never run twice."""
    first = IntakeForwarder(client.redis, sender_app(private_redis.url), consumer="w1",
                            reclaim_after_ms=0)
    first.ensure_group()
    request = run_request("once")
    client.submit(request)
    first._done = lambda keys, entry_ids: None  # type: ignore[method-assign]  # killed here

    assert first.forward_once(block_ms=10) == 1
    assert queued(client.redis) == 1 and submitted(client.redis) == 1  # pending, not acked
    second = IntakeForwarder(client.redis, sender_app(private_redis.url), consumer="w2",
                             reclaim_after_ms=0)

    assert second.forward_once(block_ms=10) == 1  # claimed from the dead one, not sent
    assert queued(client.redis) == 1 and submitted(client.redis) == 0
    assert client.redis.hget(f"evalfleet:status:{request.run_id}", "sent") is not None
