"""The status record's scripts on a real Redis (tasks.lifecycle): each transition, and
cancel racing publication — a run is never both cancelled and published otherwise."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
import redis as redis_lib

from evalfleet.sandbox.profile import Profile
from evalfleet.sandbox.testing.fake import FakeFactory
from evalfleet.tasks.evaluation.pipeline import PipelineConfig, ProfileBounds
from evalfleet.tasks.lifecycle import Lifecycle
from evalfleet.tasks.messages import RunRequest, RunResult
from evalfleet.tasks.platform import EvalfleetClient
from evalfleet.tasks.platform.cancels import cancel
from evalfleet.tasks.publish import Publisher
from evalfleet.tasks.redis_keys import RESULTS_STREAM, status_key
from evalfleet.tasks.run_task import execute
from evalfleet.tasks.status import RunStatus
from evalfleet.tasks.task_context import Runtime

PACK: dict[str, Any] = {
    "pack": {"slug": "echo"},
    "version": {"evaluation_spec": {
        "name": "echo", "version_number": 1, "judge_mode": "deterministic",
        "validators": [{"key": "hi", "type": "contains", "target": "final_output",
                        "expected_from": "literal:hi"}],
        "scorecard": {"dimensions": ["correctness"]}}},
}


@pytest.fixture
def redis(redis_server: Any) -> Any:
    client = redis_lib.Redis.from_url(redis_server.url)
    yield client
    client.close()


def unique(prefix: str) -> str:
    return f"{prefix}-{time.time_ns()}"


def status(redis: Any, run_id: str) -> RunStatus | None:
    return RunStatus.from_record(run_id, redis.hgetall(status_key(run_id)))


def test_each_transition_writes_the_record(redis: Any, redis_server: Any) -> None:
    """Queued once (a second submission leaves it), running with its worker and attempt,
    then its outcome; every transition timed; the match lists it."""
    life, run_id, match = Lifecycle(redis, ttl_s=600), unique("life"), unique("m")
    publisher = Publisher(redis, 600, worker="w-1")

    assert life.queue(run_id, match, None, "1-1") == 1
    assert life.queue(run_id, None, None, "1-2") == 0  # another entry: a duplicate
    assert life.queue(run_id, None, None, "1-1") == 2  # its own entry, read again
    assert publisher.admit(run_id) == 1
    running = status(redis, run_id)
    result = RunResult(run_id=run_id, outcome="scored", match=match)
    assert publisher.publish(result, result.to_json())
    ended = status(redis, run_id)

    assert running is not None and (running.status, running.worker, running.attempt,
                                     running.match) == ("running", "w-1", 1, match)
    assert ended is not None and ended.status == "scored" and ended.final
    assert set(ended.at) == {"queued", "running", "scored"}
    assert ended.at["queued"] <= ended.at["running"] <= ended.at["scored"]
    assert 0 < redis.ttl(status_key(run_id)) <= 600
    client = EvalfleetClient(redis_server.url)
    assert [(s.run_id, s.status) for s in client.runs(match)] == [(run_id, "scored")]
    client.close()


def test_a_deadline_that_passed_keeps_a_run_from_starting(redis: Any) -> None:
    """``expires_at`` in the past, given or recorded: -1, and no delivery is counted."""
    life, run_id = Lifecycle(redis, 600), unique("late")
    life.queue(run_id, None, time.time() - 5)

    assert life.admit(run_id, "w", None) == -1
    assert life.admit(unique("given"), "w", time.time() - 5) == -1
    assert life.admit(unique("timely"), "w", time.time() + 60) == 1
    assert status(redis, run_id).status == "queued"


def test_cancel_and_publication_race_and_one_wins(redis: Any) -> None:
    """Two hundred runs, each published by one thread while another cancels it: each has
    one result and one stream entry, and the cancel's answer agrees with the result."""
    life, publisher = Lifecycle(redis, 600), Publisher(redis, 600)
    run_ids = [unique(f"race{i}") for i in range(200)]
    for run_id in run_ids:
        life.queue(run_id, None, None)
        publisher.admit(run_id)
    answers: dict[str, str] = {}

    def publish_all() -> None:
        for run_id in run_ids:
            scored = RunResult(run_id=run_id, outcome="scored")
            publisher.publish(scored, scored.to_json())

    def cancel_all() -> None:
        for run_id in reversed(run_ids):
            answers[run_id] = cancel(life, run_id).what

    threads = [threading.Thread(target=publish_all), threading.Thread(target=cancel_all)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    outcomes = {r: RunResult.model_validate_json(redis.get(f"evalfleet:result:{r}")).outcome
                for r in run_ids}
    assert {answers[r] for r in run_ids} <= {"cancelled", "finished"}
    assert all((answers[r] == "cancelled") == (outcomes[r] == "cancelled") for r in run_ids)
    assert all(status(redis, r).status == outcomes[r] for r in run_ids)
    streamed = [f[b"run_id"].decode() for _, f in redis.xrange(RESULTS_STREAM)
                if f[b"run_id"].decode() in outcomes]
    assert sorted(streamed) == sorted(run_ids)


def test_a_cancel_between_delivery_and_sandbox_starts_nothing(redis: Any) -> None:
    """The run is admitted (running), then cancelled while the pipeline prepares it (the
    preflight gate's moment): no sandbox is made, the worker publishes nothing, the
    cancel's result stands."""
    run_id, life, factory = unique("between"), Lifecycle(redis, 600), FakeFactory()
    profile = Profile("default", "fake")
    rt = Runtime(config=PipelineConfig(profiles={"default": ProfileBounds(profile)}),
                 factory=factory, redis=redis, publisher=Publisher(redis, 600, worker="w"),
                 gate=lambda run: (cancel(life, run.request.run_id), (None, False))[1])
    body = RunRequest(run_id=run_id, pack=PACK, submission={"commands": [{"run": "echo hi"}]})

    outcome = execute(rt, None, body.model_dump_json(), enqueued_at=None)

    assert outcome == "cancelled" and factory.sandboxes == []
    assert RunResult.model_validate_json(redis.get(f"evalfleet:result:{run_id}")).outcome \
        == "cancelled"
    assert status(redis, run_id).status == "cancelled"


def test_a_request_without_the_new_fields_is_scored(redis: Any) -> None:
    """A request as an older client sends it (no match, no expires_at, no attempt): scored,
    and its record made by the worker."""
    old = {"schema_version": 1, "run_id": unique("old"), "pack": PACK, "priority": 5,
           "submission": {"commands": [{"run": "echo hi"}]}, "metadata": {"v": "0.1"}}
    profile = Profile("default", "fake")
    rt = Runtime(config=PipelineConfig(profiles={"default": ProfileBounds(profile)}),
                 factory=FakeFactory(), redis=redis, publisher=Publisher(redis, 600, "w"))

    assert execute(rt, None, old, enqueued_at=None) == "scored"
    assert status(redis, old["run_id"]).status == "scored"
