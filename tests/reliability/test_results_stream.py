"""Consumers that fall behind, stop half-way or vanish: no result is lost to them.

Against a real ``redis-server`` (no workers, no Docker): results are published with the
fleet's own :class:`Publisher` and read back with :class:`EvalfleetClient`.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator

import pytest
from prometheus_client import CollectorRegistry

from evalfleet.scoring.run.scorecard import Scorecard
from evalfleet.tasks.messages import RunResult
from evalfleet.tasks.platform import EvalfleetClient
from evalfleet.tasks.platform.result_groups import group_states
from evalfleet.tasks.publish import Publisher
from evalfleet.tasks.redis_keys import RESULTS_CHANNEL, RESULTS_STREAM
from evalfleet.workers.devtools.local_fleet import RedisServer
from evalfleet.workers.metrics import ResultsCollector

#: ``EVALFLEET_STREAM_MAXLEN``'s default before results were kept by age.
OLD_STREAM_LENGTH = 100_000
DAY_MS = 24 * 3600 * 1000


@pytest.fixture
def client(private_redis: RedisServer) -> Iterator[EvalfleetClient]:
    made = EvalfleetClient(private_redis.url)
    yield made
    made.close()


def result(run_id: str) -> RunResult:
    card = Scorecard(status="complete", strategy="binary", overall_score=1.0, passed=True,
                     overall_reason="", validity="valid", score=1000, result="win")
    return RunResult(run_id=run_id, outcome="scored", scorecard=card)


def publish(publisher: Publisher, prefix: str, count: int) -> list[str]:
    run_ids = [f"{prefix}-{i}" for i in range(count)]
    for run_id in run_ids:
        found = result(run_id)
        assert publisher.publish(found, found.to_json())
    return run_ids


def read(client: EvalfleetClient, group: str, **options: object) -> list[str]:
    return [r.run_id for r in client.results(group=group, block_ms=50, stop_when_idle=True,
                                             **options)]  # type: ignore[arg-type]


def test_a_group_behind_by_more_than_the_old_stream_length_misses_nothing(
        client: EvalfleetClient) -> None:
    """A platform's group reads, goes away while more results are published than the stream
    used to hold (its old MAXLEN), comes back: it gets every one of them, in order."""
    publisher = Publisher(client.redis)
    before = publish(publisher, "before", 3)
    assert read(client, "platform") == before
    away = publish(publisher, "away", OLD_STREAM_LENGTH + 5_000)

    (state,) = group_states(client.redis)
    assert (state.name, state.lag, state.pending, state.missed) == (
        "platform", len(away), 0, 0)
    assert read(client, "platform") == away
    (state,) = group_states(client.redis)
    assert (state.lag, state.pending, state.behind_s) == (0, 0, 0.0)


def test_the_stream_entry_is_small_and_names_the_result(client: EvalfleetClient) -> None:
    """An entry carries the run id and a summary; the result itself stays in its key."""
    publisher = Publisher(client.redis, ttl_s=3600)
    publish(publisher, "small", 1)

    ((_, fields),) = client.redis.xrange(RESULTS_STREAM)
    assert fields == {b"run_id": b"small-0", b"outcome": b"scored", b"score": b"1000",
                      b"scorecard_result": b"win"}
    assert 3500 < client.redis.ttl("evalfleet:result:small-0") <= 3600


def test_entries_of_the_old_format_are_still_read(client: EvalfleetClient) -> None:
    """Entries a worker of the previous version appended (``run_id``, ``result`` with the
    whole JSON) are read like the new ones, from the result's key: consumers can be
    upgraded before the workers."""
    old = result("old-format")
    client.redis.set("evalfleet:result:old-format", old.to_json())
    client.redis.xadd(RESULTS_STREAM, {"run_id": "old-format", "result": old.to_json()})
    new = publish(Publisher(client.redis), "new-format", 1)

    assert read(client, "upgraded") == ["old-format", *new]


def test_a_consumer_stopped_mid_batch_resumes_where_it_stopped(client: EvalfleetClient) -> None:
    """The results being handled when the consumer stopped come again (at least once: up to
    ten), then the rest; another consumer of the group claims what a vanished one left."""
    run_ids = publish(Publisher(client.redis), "resume", 16)
    first = client.results(group="g", consumer="a", block_ms=50, stop_when_idle=True)
    assert [next(first).run_id for _ in range(12)] == run_ids[:12]
    first.close()  # stopped while handling the 12th: the first ten were acknowledged

    assert read(client, "g", consumer="a") == run_ids[10:]

    vanished = client.results(group="g2", consumer="gone", block_ms=50, stop_when_idle=True)
    assert next(vanished).run_id == run_ids[0]
    vanished.close()
    assert read(client, "g2", consumer="other", claim_after_ms=0) == run_ids


def test_results_older_than_their_ttl_leave_the_stream_and_are_reported(
        client: EvalfleetClient, caplog: pytest.LogCaptureFixture) -> None:
    """The stream is trimmed by age: entries older than the results' TTL go at the next
    publication, and a group that had not read them is told how many it missed."""
    now_ms = int(client.redis.time()[0]) * 1000
    for i in range(250):  # results published 8 days ago (their keys expired long since)
        client.redis.xadd(RESULTS_STREAM, {"run_id": f"old-{i}"}, id=f"{now_ms - 8 * DAY_MS}-{i}")
    client.redis.xgroup_create(RESULTS_STREAM, "late", id="0")
    client.redis.xreadgroup("late", "c", {RESULTS_STREAM: ">"}, count=10)  # then went away
    client.redis.xack(RESULTS_STREAM, "late", *[f"{now_ms - 8 * DAY_MS}-{i}" for i in range(10)])
    fresh = publish(Publisher(client.redis), "fresh", 3)  # TTL 7 days: trims what is older

    kept = int(client.redis.xlen(RESULTS_STREAM))
    (state,) = group_states(client.redis)
    assert kept < 243 and state.missed == 243 - kept
    with caplog.at_level(logging.WARNING, logger="evalfleet.tasks.platform.client"):
        assert read(client, "late") == fresh
    assert f"{243 - kept} results expired before it read them" in caplog.text
    assert "expired before it was read" in caplog.text  # old entries still in the stream


def test_consumer_group_lag_metrics(client: EvalfleetClient) -> None:
    """The worker's scrape reports each group's lag, pending results and how long ago its
    oldest unread result was published; all 0 once it caught up."""
    client.redis.xgroup_create(RESULTS_STREAM, "dash", id="0", mkstream=True)
    an_hour_ago = int(client.redis.time()[0]) * 1000 - 3600 * 1000
    client.redis.xadd(RESULTS_STREAM, {"run_id": "gone"}, id=f"{an_hour_ago}-0")
    publish(Publisher(client.redis), "lag", 2)
    registry = CollectorRegistry()
    registry.register(ResultsCollector(client.redis))

    def sample(name: str) -> float | None:
        return registry.get_sample_value(name, {"group": "dash"})

    assert (sample("evalfleet_results_group_lag"), sample("evalfleet_results_group_pending"),
            registry.get_sample_value("evalfleet_results_stream_entries")) == (3.0, 0.0, 3.0)
    assert 3600 <= (sample("evalfleet_results_group_behind_seconds") or 0) < 7200
    assert read(client, "dash") == ["lag-0", "lag-1"]
    assert (sample("evalfleet_results_group_lag"), sample("evalfleet_results_group_pending"),
            sample("evalfleet_results_group_behind_seconds")) == (0.0, 0.0, 0.0)


def gets(client: EvalfleetClient) -> int:
    """``GET`` commands Redis has served so far."""
    return int(client.redis.info("commandstats").get("cmdstat_get", {}).get("calls", 0))


def test_a_waiting_client_reads_only_its_own_result(client: EvalfleetClient) -> None:
    """``wait`` returns the run's result once it is published; the results of other runs
    published meanwhile wake it but cost no ``GET`` each (a waiter per run of a busy
    fleet would otherwise read every result once per waiter)."""
    publisher, found = Publisher(client.redis), []
    before = gets(client)
    waiter = threading.Thread(target=lambda: found.append(client.wait("mine", timeout=60)))
    waiter.start()
    while client.redis.pubsub_numsub(RESULTS_CHANNEL)[0][1] < 1:
        time.sleep(0.01)

    publish(publisher, "other", 40)
    publish(publisher, "mine", 1)  # mine-0: not this waiter's run
    mine = result("mine")
    assert publisher.publish(mine, mine.to_json())
    waiter.join(timeout=60)

    assert [r.run_id for r in found] == ["mine"]
    assert gets(client) - before < 10  # a GET per wake-up would be 42


def test_waiting_for_a_run_never_published_times_out_and_one_published_is_there(
        client: EvalfleetClient) -> None:
    """A result published before the wait is returned at once; no result within the
    timeout is a ``TimeoutError`` naming the run, whatever else is published meanwhile."""
    publisher = Publisher(client.redis)
    publish(publisher, "early", 1)
    assert client.wait("early-0", timeout=5).run_id == "early-0"

    threading.Timer(0.1, publish, (publisher, "noise", 3)).start()
    with pytest.raises(TimeoutError, match="'never'"):
        client.wait("never", timeout=0.5)
