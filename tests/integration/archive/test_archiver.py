"""The archiver against a real Redis and a real S3 server (SeaweedFS): a result leaves
Redis only after the store has it, byte for byte; a store that is down holds results back
(and, near Redis's memory, refuses new runs with the reason); the clients, the CLI and
``evalfleet rescore`` find runs in the archive once Redis has forgotten them."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from typing import Any

import pytest
from click.testing import CliRunner

from evalfleet.scoring.run.scorecard import Scorecard
from evalfleet.tasks.archive import Archive
from evalfleet.tasks.archive.archiver import Archiver
from evalfleet.tasks.archive.backlog import Limits, archive_backlog
from evalfleet.tasks.messages import RunResult
from evalfleet.tasks.platform import EvalfleetClient, SubmitError
from evalfleet.tasks.platform.async_client import AsyncEvalfleetClient
from evalfleet.tasks.publish import Publisher
from evalfleet.tasks.redis_keys import (
    ARCHIVE_GROUP,
    ARCHIVE_REFUSAL_KEY,
    RESULTS_STREAM,
    result_key,
    status_key,
)
from evalfleet.workers.cli import main
from evalfleet.workers.devtools.local_fleet import RedisServer

DEAD_STORE = "s3://k:s@bucket/p?endpoint=http://127.0.0.1:9"
TTL_S = 3600


def result(run_id: str, match: str = "m") -> RunResult:
    card = Scorecard(status="complete", strategy="binary", overall_score=1.0, passed=True,
                     overall_reason="", validity="valid", score=1000, result="win")
    return RunResult(run_id=run_id, outcome="scored", scorecard=card, match=match)


def publish(plain: Any, run_ids: list[str], match: str = "m",
            ttl_s: int = TTL_S) -> dict[str, bytes]:
    """Publish a result for each run id; their bodies as published."""
    publisher = Publisher(plain, ttl_s)
    bodies = {}
    for run_id in run_ids:
        found = result(run_id, match)
        assert publisher.publish(found, found.to_json())
        bodies[run_id] = plain.get(result_key(run_id))
    return bodies


def archiver(plain: Any, url: str, **options: Any) -> Archiver:
    archive = Archive.at(url)
    assert archive is not None
    made = Archiver(plain, archive, consumer="a1", ttl_s=TTL_S, **options)
    made.ensure_group()
    return made


def drain(made: Archiver) -> None:
    while made.step(block_ms=10):
        pass


@pytest.fixture
def url(seaweedfs: Any) -> str:
    return str(seaweedfs.url(f"a-{uuid.uuid4().hex[:8]}"))


def test_a_result_leaves_redis_only_after_the_store_has_it(plain: Any, url: str) -> None:
    """With the archive on, a result is published without expiry; once archived, it and
    its status record get the TTL, the entry is acknowledged, and the object holds the
    published bytes exactly."""
    made = archiver(plain, url)
    bodies = publish(plain, ["r1", "r2"])
    assert plain.ttl(result_key("r1")) == -1 and plain.ttl(status_key("r1")) == -1
    assert archive_backlog(plain) == 2

    drain(made)

    assert 0 < plain.ttl(result_key("r1")) <= TTL_S
    assert 0 < plain.ttl(status_key("r2")) <= TTL_S
    assert archive_backlog(plain) == 0
    archived = made.archive.run("r1")
    assert archived is not None and archived.body == bodies["r1"]
    assert archived.status["status"] == "scored"
    assert made.tally.archived == 2 and made.tally.bytes > 0


def test_without_the_archive_a_result_has_its_ttl_at_once(plain: Any) -> None:
    publish(plain, ["r1"])

    assert 0 < plain.ttl(result_key("r1")) <= TTL_S


def test_a_store_that_is_down_holds_results_back_until_it_returns(plain: Any,
                                                                   url: str) -> None:
    """Writes to a dead store fail and are counted; every entry stays pending, results
    keep no TTL; the same consumer, the store back, writes them all and acknowledges."""
    down = archiver(plain, DEAD_STORE, backoff_s=0.0)
    bodies = publish(plain, [f"r{i}" for i in range(5)])

    down.step(block_ms=10)

    assert down.tally.failures == 1 and down.tally.archived == 0
    assert archive_backlog(plain) == 5
    assert all(plain.ttl(result_key(r)) == -1 for r in bodies)
    back = archiver(plain, url)
    drain(back)
    assert archive_backlog(plain) == 0
    assert {r: back.archive.run(r).body for r in bodies} == bodies  # type: ignore[union-attr]


def test_the_stream_is_never_trimmed_past_the_archives_oldest_pending_entry(
        plain: Any) -> None:
    """Results are kept by age (here 1 s, counted in Redis's whole seconds: up to 2 s):
    without the archive, old entries are trimmed as new ones come; with it, not one entry
    the archive has not acknowledged goes."""
    down = archiver(plain, DEAD_STORE)
    publish(plain, [f"old-{i}" for i in range(300)], ttl_s=1)
    down.step(block_ms=10)  # reads 100 (pending from old-0 on) and fails the first
    time.sleep(2.5)
    publish(plain, ["new"], ttl_s=1)

    assert plain.xlen(RESULTS_STREAM) == 301
    assert plain.xpending(RESULTS_STREAM, ARCHIVE_GROUP)["pending"] == 100
    plain.xgroup_destroy(RESULTS_STREAM, ARCHIVE_GROUP)
    publish(plain, ["newer"], ttl_s=1)
    assert plain.xlen(RESULTS_STREAM) < 301


def test_a_backlog_near_redis_memory_refuses_new_runs_with_the_reason(
        own_redis: RedisServer, plain: Any, url: str) -> None:
    """Results wait (the store is down) and Redis is past ``refuse_at`` of its
    ``maxmemory``: submissions fail with the reason; once the archive catches up, they
    are taken again."""
    down = archiver(plain, DEAD_STORE, backoff_s=0.0, limits=Limits(refuse_at=0.5))
    publish(plain, ["r1"])
    used = int(plain.info("memory")["used_memory"])
    plain.config_set("maxmemory", str(int(used * 1.5)))
    client = EvalfleetClient(own_redis.url)

    down.step(block_ms=10)

    with pytest.raises(SubmitError, match="archive is 1 result behind") as refused:
        client.submit(request("s1"))
    assert refused.value.not_enqueued == ["s1"]
    back = archiver(plain, url, limits=Limits(refuse_at=0.5))
    drain(back)
    assert plain.get(ARCHIVE_REFUSAL_KEY) is None
    assert client.submit(request("s2")) == "s2"
    client.close()


def request(run_id: str) -> dict[str, Any]:
    return {"run_id": run_id, "pack_ref": "p", "submission": {"final_output": "hi"}}


def forget(plain: Any, run_ids: list[str]) -> None:
    """What the TTL does: the result, the status record and the match index go."""
    plain.delete(*(result_key(r) for r in run_ids), *(status_key(r) for r in run_ids),
                 "evalfleet:match:m")


def test_the_clients_find_a_forgotten_run_in_the_archive(own_redis: RedisServer, plain: Any,
                                                         url: str) -> None:
    bodies = publish(plain, ["r1", "r2"])
    drain(archiver(plain, url))
    forget(plain, ["r1", "r2"])
    client = EvalfleetClient(own_redis.url, archive_url=url)

    found = client.result("r1")
    status = client.status("r1")
    runs = client.runs("m")
    waited = client.wait("r2", timeout=5)

    assert found is not None and found.to_json().encode() == bodies["r1"]
    assert status is not None and status.status == "scored"
    assert [s.run_id for s in runs] == ["r1", "r2"]
    assert waited.to_json().encode() == bodies["r2"]
    assert EvalfleetClient(own_redis.url).result("r1") is None  # no archive: gone
    assert asyncio.run(_async_reads(own_redis.url, url)) == ("r1", "scored", ["r1", "r2"])


async def _async_reads(redis_url: str, url: str) -> tuple[str, str, list[str]]:
    async with AsyncEvalfleetClient(redis_url, archive_url=url) as client:
        found, status = await client.result("r1"), await client.status("r1")
        runs = await client.runs("m")
        assert (await client.wait("r2", timeout=5)).run_id == "r2"
    assert found is not None and status is not None
    return found.run_id, status.status, [s.run_id for s in runs]


def test_the_cli_and_rescore_read_the_archive(own_redis: RedisServer, plain: Any,
                                              url: str) -> None:
    bodies = publish(plain, ["r1"])
    drain(archiver(plain, url))
    forget(plain, ["r1"])
    env = {"EVALFLEET_REDIS_URL": own_redis.url, "EVALFLEET_ARCHIVE__URL": url}
    runner = CliRunner()

    shown = runner.invoke(main, ["result", "r1"], env=env)
    status = runner.invoke(main, ["status", "r1"], env=env)
    listed = runner.invoke(main, ["runs", "--match", "m"], env=env)
    rescored = runner.invoke(main, ["rescore", "--archived-match", "m", "--format", "json"],
                             env=env)

    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.stdout) == json.loads(bodies["r1"])
    assert status.exit_code == 0 and status.stdout.startswith("r1: scored")
    assert listed.exit_code == 0 and listed.stdout.startswith("r1: scored")
    assert rescored.exit_code == 0, rescored.output
    assert json.loads(rescored.stdout.splitlines()[0])["run_id"] == "r1"
    gone = runner.invoke(main, ["result", "r1", "--archive-url", "none"], env=env)
    assert gone.exit_code == 1
