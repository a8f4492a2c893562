"""The asyncio client (tasks.platform.async_client) against a real Redis and a live worker:
the same verbs as the synchronous client, awaited."""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

from evalfleet.tasks.messages import RunRequest, RunResult
from evalfleet.tasks.platform import AsyncEvalfleetClient, SubmitError

PACK: dict[str, Any] = {
    "pack": {"slug": "async"},
    "version": {"evaluation_spec": {
        "name": "async", "version_number": 1, "judge_mode": "deterministic",
        "validators": [{"key": "hi", "type": "contains", "target": "final_output",
                        "expected_from": "literal:hi"}],
        "scorecard": {"dimensions": ["correctness"]}}},
}


def request(prefix: str, command: str = "echo hi", **extra: Any) -> RunRequest:
    return RunRequest(run_id=f"{prefix}-{uuid.uuid4().hex[:12]}", pack=PACK,
                      submission={"commands": [{"run": command, "timeout_ms": 120_000}]},
                      **extra)


async def running(client: AsyncEvalfleetClient, run_id: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while (found := await client.status(run_id)) is None or found.status != "running":
        assert time.monotonic() < deadline, f"{run_id} did not start: {found}"
        await asyncio.sleep(0.1)


def test_submit_wait_and_cancel_with_asyncio(start_worker: Any, redis_server: Any) -> None:
    """A batch is queued then scored (``wait``, ``wait_many`` by match, ``runs``); a running
    run is cancelled and its one result says so; ``results`` reads them all through a
    consumer group."""
    start_worker("async", ["-c", "2"])
    match = f"async-{time.time_ns()}"
    batch = [request("async", match=match) for _ in range(3)]
    looping = request("looping", "while true; do sleep 0.2; done", match=match)

    async def scenario() -> tuple[list[str], RunResult, list[RunResult], Any, RunResult,
                                  list[str], list[str]]:
        async with AsyncEvalfleetClient(redis_server.url) as client:
            ids = await client.submit_batch(batch, chunk=2)
            first = await client.wait(ids[0], timeout=120)
            rest = [r async for r in client.wait_many(match, timeout=120)
                    if r.run_id != ids[0]]
            await client.submit(looping)
            await running(client, looping.run_id)
            answer = await client.cancel(looping.run_id)
            cancelled = await client.wait(looping.run_id, timeout=60)
            statuses = [s.status for s in await client.runs(match)]
            group = f"g-{time.time_ns()}"
            read = [r.run_id async for r in client.results(group=group, block_ms=100,
                                                           stop_when_idle=True)]
            return ids, first, rest, answer, cancelled, statuses, read

    ids, first, rest, answer, cancelled, statuses, read = asyncio.run(scenario())

    assert ids == [r.run_id for r in batch]
    assert first.outcome == "scored" and first.scorecard is not None
    assert first.scorecard.result == "win"
    assert sorted(r.run_id for r in rest) == sorted(ids[1:])
    assert (answer.what, answer.was) == ("cancelled", "running")
    assert cancelled.outcome == "cancelled" and cancelled.scorecard is None
    assert statuses == ["scored", "scored", "scored", "cancelled"]
    assert {*ids, looping.run_id} <= set(read)


def test_an_async_submission_redis_refuses_raises_submit_error(redis_server: Any) -> None:
    """A Redis that cannot be reached: every run is named not enqueued, the round trip's
    as uncertain."""
    url = redis_server.url.rsplit(":", 1)[0] + ":1/0"  # nothing listens on port 1
    runs = [request("unreachable") for _ in range(3)]

    async def scenario() -> SubmitError:
        async with AsyncEvalfleetClient(url) as client:
            try:
                await client.submit_batch(runs, chunk=2)
            except SubmitError as err:
                return err
        raise AssertionError("submitted to nothing")

    raised = asyncio.run(scenario())

    assert raised.enqueued == []
    assert raised.not_enqueued == [r.run_id for r in runs]
    assert raised.uncertain == [r.run_id for r in runs[:2]]
    assert "Redis could not be reached" in str(raised)
