"""The task body's delivery policy, with an in-memory Redis stand-in (logic only).

The same paths run against real Redis and workers in tests/integration/fleet.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from redis.exceptions import OutOfMemoryError
from unit.tasks.pipeline_support import TESTS_PASS, request

from evalfleet.sandbox.errors import SandboxConfigError, SandboxUnavailable
from evalfleet.sandbox.profile import Limits, Profile
from evalfleet.sandbox.testing.fake import FakeFactory
from evalfleet.tasks.evaluation.pipeline import PipelineConfig, ProfileBounds
from evalfleet.tasks.messages import RunResult
from evalfleet.tasks.patience import Patience
from evalfleet.tasks.publish import sealed
from evalfleet.tasks.redis_keys import FLEET, Keyspace
from evalfleet.tasks.run_task import execute
from evalfleet.tasks.signatures import Signer
from evalfleet.tasks.task_context import Runtime

wall_clock = time.time


class MemoryRedis:
    """The few Redis commands the task uses, in a dict."""

    def __init__(self) -> None:
        self.data: dict[str, Any] = {}

    def incr(self, key: str) -> int:
        self.data[key] = int(self.data.get(key, 0)) + 1
        return int(self.data[key])

    def expire(self, key: str, seconds: int) -> None:
        """TTLs do not matter here."""

    def exists(self, key: str) -> int:
        return int(key in self.data)

    def hget(self, key: str, field: str) -> Any:
        return self.data.get(f"{key}#{field}")

    def pubsub(self, **options: Any) -> QuietChannel:
        return QuietChannel()


class QuietChannel:
    """Pub/sub on which nothing is ever said (the cancel watch listens to it)."""

    def subscribe(self, *channels: str) -> None:
        """Nothing."""

    def get_message(self, timeout: float = 0.0) -> None:
        time.sleep(timeout)

    def close(self) -> None:
        """Nothing."""


class MemoryPublisher:
    """SET NX semantics over the same dict."""

    def __init__(self, redis: MemoryRedis) -> None:
        self.redis = redis
        self.results: list[RunResult] = []
        self.signer = Signer.generate()

    def body(self, result: RunResult, max_bytes: int) -> str:
        return sealed(result, max_bytes, self.signer)

    def published(self, run_id: str, keys: Keyspace = FLEET) -> bool:
        return keys.result(run_id) in self.redis.data

    def admit(self, run_id: str, expires_at: float | None = None,
              match: str | None = None, callback_url: str | None = None,
              keys: Keyspace = FLEET) -> int:
        """The Lua script's order: the published check, the deadline, then the count."""
        if self.redis.exists(keys.result(run_id)):
            return 0
        if expires_at is not None and wall_clock() > expires_at:
            return -1
        return self.redis.incr(keys.deliveries(run_id))

    def publish(self, result: RunResult, body: str, keys: Keyspace = FLEET) -> bool:
        if self.published(result.run_id, keys):
            return False
        self.redis.data[keys.result(result.run_id)] = body
        self.results.append(RunResult.model_validate_json(body))
        return True


class Retry(Exception):
    """What ``task.retry`` raises."""


class FakeTask:
    def __init__(self) -> None:
        self.retries: list[float] = []
        self.request = type("R", (), {"delivery_info": {"routing_key": "evalfleet.default"}})()

    def retry(self, exc: BaseException, countdown: float, throw: bool = True) -> Retry:
        """Celery's ``retry``: the ``Retry`` to raise is raised, or returned (``throw=False``)."""
        self.retries.append(countdown)
        if throw:
            raise Retry(str(exc))
        return Retry(str(exc))


class Exploding:
    """A sandbox factory that fails the same way every time."""

    def __init__(self, error: BaseException) -> None:
        self.error = error

    def acquire(self, profile: Profile, *, run_id: str) -> Any:
        raise self.error


class FakeTime:
    """A clock that only moves when someone sleeps."""

    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds

    def clock(self) -> float:
        return self.now


def runtime(factory: Any, cap: int = 3, **limits: Any) -> tuple[Runtime, MemoryPublisher]:
    redis = MemoryRedis()
    publisher = MemoryPublisher(redis)
    profile = Profile("default", "fake", limits=Limits(**limits))
    config = PipelineConfig(profiles={"default": ProfileBounds(profile)})
    time = FakeTime()
    built = Runtime(config=config, factory=factory, redis=redis,
                    publisher=publisher,  # type: ignore[arg-type]  (a stand-in)
                    delivery_cap=cap, retry_backoff_s=1.0, time_limit_s=70.0,
                    patience=Patience(sleep=time.sleep, clock=time.clock))
    return built, publisher


def refusing(times: int, then: Any) -> Any:
    """A Redis call that Redis refuses ``times`` times (out of memory), then makes."""
    refusals = iter(range(times))

    def call(*args: Any, **kwargs: Any) -> Any:
        if next(refusals, None) is not None:
            raise OutOfMemoryError("command not allowed when used memory > 'maxmemory'.")
        return then(*args, **kwargs)

    return call


def test_a_scored_run_is_published_with_its_attempt() -> None:
    """The first delivery runs the pipeline and publishes attempt 1."""
    rt, publisher = runtime(FakeFactory(script={"run-tests 7": TESTS_PASS}))

    outcome = execute(rt, FakeTask(), request(), enqueued_at=None)

    assert outcome == "scored"
    assert [(r.run_id, r.attempt) for r in publisher.results] == [("run-1", 1)]


def test_a_tenants_run_is_counted_and_published_in_its_keys_only() -> None:
    """The forwarder's ``tenant`` decides where the run's delivery count and result go;
    the same run id in the fleet's own keys is another run."""
    rt, publisher = runtime(FakeFactory(script={"run-tests 7": TESTS_PASS}))

    outcome = execute(rt, FakeTask(), request(), enqueued_at=None, tenant="acme")

    acme = Keyspace("acme")
    assert outcome == "scored"
    assert publisher.published("run-1", acme) and not publisher.published("run-1")
    assert acme.deliveries("run-1") in publisher.redis.data
    assert execute(rt, FakeTask(), request(), enqueued_at=None) == "scored"  # the fleet's


def test_a_run_past_its_expiry_never_starts_and_ends_expired() -> None:
    """``expires_at`` passed before any worker took it: no sandbox, one ``expired`` result
    (no scorecard), its match echoed."""
    factory = FakeFactory(script={"run-tests 7": TESTS_PASS})
    rt, publisher = runtime(factory)

    outcome = execute(rt, FakeTask(), request(expires_at=wall_clock() - 1, match="m-1"),
                      enqueued_at=None)

    assert outcome == "expired" and factory.sandboxes == []
    [result] = publisher.results
    assert (result.outcome, result.scorecard, result.match) == ("expired", None, "m-1")
    assert result.rating is not None and result.rating.category == "expired"
    assert (result.rating.elo_score, result.rating.rating_change) == (0.5, False)


def test_a_run_cancelled_before_its_sandbox_never_starts_one() -> None:
    """Cancelled between its delivery and its sandbox: nothing starts, nothing is published
    by the worker (the cancel published the run's result)."""
    factory = FakeFactory(script={"run-tests 7": TESTS_PASS})
    rt, publisher = runtime(factory)
    rt.redis.data["evalfleet:status:run-1#status"] = b"cancelled"

    assert execute(rt, FakeTask(), request(), enqueued_at=None) == "cancelled"
    assert factory.sandboxes == [] and publisher.results == []


@pytest.mark.parametrize(("files", "sandboxes"), [
    ({"n" * 256: "x"}, 0),  # found on the host: no sandbox
    ({"big.bin": "x" * 2000}, 1),  # found by the sandbox: its workspace full
])
def test_a_submission_the_sandbox_cannot_hold_is_a_loss_at_once(files: dict[str, str],
                                                              sandboxes: int) -> None:
    """Published as the candidate's loss on the first delivery, never retried: before, it
    was our bug three times over (three deliveries, three sandboxes), then
    ``internal_error``."""
    factory = FakeFactory(script={"run-tests 7": TESTS_PASS})
    rt, publisher = runtime(factory, workspace_bytes=1000)
    body = request(submission={"files": {"answer.txt": "42", **files},
                               "commands": [{"run": "echo 42"}]})
    task = FakeTask()

    assert execute(rt, task, body, enqueued_at=None) == "scored"

    card = publisher.results[0].scorecard
    assert card is not None and (card.result, card.score) == ("loss", 0)
    assert task.retries == [] and len(factory.sandboxes) == sandboxes


def test_an_already_published_run_is_not_run_again() -> None:
    """A redelivered run whose result exists publishes nothing and runs nothing."""
    factory = FakeFactory(script={"run-tests 7": TESTS_PASS})
    rt, publisher = runtime(factory)
    execute(rt, FakeTask(), request(), enqueued_at=None)

    assert execute(rt, FakeTask(), request(), enqueued_at=None) == "duplicate"
    assert len(factory.sandboxes) == 1
    assert len(publisher.results) == 1


@pytest.mark.parametrize(("error", "outcome"), [
    (SandboxUnavailable("engine down"), "infra_error"),
    (ConnectionError("redis blip"), "infra_error"),
    (ZeroDivisionError("our bug"), "internal_error"),
])
def test_failures_retry_with_backoff_then_give_up_at_the_cap(error: BaseException,
                                                              outcome: str) -> None:
    """Infra failures and our bugs retry (2^n backoff) and are published at the cap."""
    rt, publisher = runtime(Exploding(error), cap=3)
    task = FakeTask()

    for _ in range(2):
        with pytest.raises(Retry):
            execute(rt, task, request(), enqueued_at=None)
    final = execute(rt, task, request(), enqueued_at=None)

    assert task.retries == [1.0, 2.0]
    assert final == outcome
    assert [(r.outcome, r.attempt) for r in publisher.results] == [(outcome, 3)]
    assert publisher.results[0].scorecard is None


def test_a_sandbox_configuration_error_is_not_retried() -> None:
    """A missing image cannot succeed on retry: published as infra_error at once."""
    rt, publisher = runtime(Exploding(SandboxConfigError("image not found")))

    assert execute(rt, FakeTask(), request(), enqueued_at=None) == "infra_error"
    assert publisher.results[0].attempt == 1


def test_a_rejection_is_published_and_never_retried() -> None:
    """An invalid request is published as rejected on its first delivery."""
    rt, publisher = runtime(FakeFactory())
    task = FakeTask()

    assert execute(rt, task, {"run_id": "r-bad"}, enqueued_at=None) == "rejected"
    assert task.retries == []
    assert publisher.results[0].run_id == "r-bad"


def test_deliveries_lost_past_the_cap_are_published_without_running() -> None:
    """A poison run that kills its pool process never returns; the delivery after the cap
    publishes ``internal_error`` instead of running it again (no endless requeue loop)."""
    factory = FakeFactory(script={"run-tests 7": TESTS_PASS})
    rt, publisher = runtime(factory, cap=3)
    for _ in range(3):  # three deliveries whose process was killed mid-run
        rt.redis.incr("evalfleet:deliveries:run-1")

    assert execute(rt, FakeTask(), request(), enqueued_at=None) == "internal_error"
    assert factory.sandboxes == []
    assert [(r.outcome, r.attempt) for r in publisher.results] == [("internal_error", 4)]
    assert "never finished" in publisher.results[0].reason


class UnsendableRetryTask(FakeTask):
    """``task.retry`` when the broker refuses the retry message (what Celery raises)."""

    def retry(self, exc: BaseException, countdown: float, throw: bool = True) -> Retry:
        from celery.exceptions import Reject

        self.retries.append(countdown)
        raise Reject(OSError("OOM command not allowed"), requeue=False)


def test_a_retry_that_cannot_be_sent_is_sent_again_then_requeues_the_run() -> None:
    """Celery rejects without requeue when it cannot send a retry; that would drop the run
    (acks_late). The task tries to send it again, with backoff, and near Celery's time
    limit (70 s here) gives the run back instead."""
    from celery.exceptions import Reject

    rt, publisher = runtime(Exploding(SandboxUnavailable("engine down")), cap=3)
    task = UnsendableRetryTask()

    with pytest.raises(Reject) as raised:
        execute(rt, task, request(), enqueued_at=None)

    assert raised.value.requeue is True
    assert publisher.results == []
    # Tries at 0, 0.5, 1.5, 3.5, 7.5 s, then every 5 s up to 57.5 s: the next would pass the
    # deadline, 10 s before the 70 s limit.
    assert len(task.retries) == 15
    assert rt.patience.clock() == 57.5


def test_a_refused_publication_waits_until_redis_takes_it() -> None:
    """Redis full at publication: the task keeps the result and publishes it once Redis
    takes it (no failure, so no acknowledgement of an unpublished run), with backoff."""
    rt, publisher = runtime(FakeFactory(script={"run-tests 7": TESTS_PASS}))
    publisher.publish = refusing(6, publisher.publish)  # type: ignore[method-assign]
    time, refused = FakeTime(), list[str]()
    rt.patience = Patience(sleep=time.sleep, clock=time.clock, on_refusal=refused.append)

    assert execute(rt, FakeTask(), request(), enqueued_at=None) == "scored"

    assert [(r.outcome, r.attempt) for r in publisher.results] == [("scored", 1)]
    assert refused == ["publication"] * 6
    assert time.sleeps == [0.5, 1.0, 2.0, 4.0, 5.0, 5.0]


def test_a_refused_delivery_count_waits_before_the_run_starts() -> None:
    """The delivery count is written before anything runs; refused, nothing starts until
    Redis takes it."""
    factory = FakeFactory(script={"run-tests 7": TESTS_PASS})
    rt, publisher = runtime(factory)
    rt.redis.incr = refusing(2, rt.redis.incr)

    assert execute(rt, FakeTask(), request(), enqueued_at=None) == "scored"
    assert rt.redis.data["evalfleet:deliveries:run-1"] == 1
    assert len(factory.sandboxes) == 1
    assert [(r.outcome, r.attempt) for r in publisher.results] == [("scored", 1)]


def test_redis_refusing_past_the_deadline_gives_the_run_back() -> None:
    """Still full when Celery's soft time limit nears: the run is requeued (never acked
    unpublished), after a bounded number of tries."""
    from celery.exceptions import Reject

    rt, publisher = runtime(FakeFactory(script={"run-tests 7": TESTS_PASS}))
    publisher.publish = refusing(1000, publisher.publish)  # type: ignore[method-assign]

    with pytest.raises(Reject) as raised:
        execute(rt, FakeTask(), request(), enqueued_at=None)

    assert raised.value.requeue is True and "publication" in str(raised.value.reason)
    assert publisher.results == []


def test_a_ten_thousand_deep_body_is_rejected_not_crashed() -> None:
    """A body nested 10k deep used to raise RecursionError before the pipeline ran: the
    task died, the message was acked, and no result was ever published."""
    rt, publisher = runtime(FakeFactory())

    assert execute(rt, FakeTask(), "[" * 10_000 + "]" * 10_000, enqueued_at=None) == "rejected"
    assert publisher.results[0].run_id.startswith("invalid-")
    assert "nested too deeply" in publisher.results[0].errors[0].message
