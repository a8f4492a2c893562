"""Webhooks against a real Redis and a real HTTP receiver on loopback (tasks.webhooks):
signed and verified as a receiver does, byte for byte, retried through refusals, timeouts,
500s and slow answers, delivered once across dispatchers that die."""

from __future__ import annotations

import json
import socket
import time
from typing import Any

from delivery_support import SECRET, answers, config, dispatcher, drain, ended, publish, webhook
from webhook_receiver import Receiver, Reply, then

from evalfleet.tasks.lifecycle import Lifecycle
from evalfleet.tasks.platform.cancels import cancel
from evalfleet.tasks.publish import Publisher
from evalfleet.tasks.redis_keys import (
    RESULTS_STREAM,
    WEBHOOKS_DUE,
    WEBHOOKS_GROUP,
    WEBHOOKS_PENDING,
    result_key,
    status_key,
)
from evalfleet.tasks.status import RunStatus
from evalfleet.tasks.webhooks.signature import HEADER, verify
from evalfleet.workers.devtools.local_fleet import RedisServer, free_port


def test_a_result_is_delivered_signed_and_byte_for_byte(redis: Any) -> None:
    """The receiver gets the published body as it is, verifies the signature in a few
    lines (tasks.webhooks.signature.verify), and the run id as the idempotency key; the
    status record shows the attempt and its answer; nothing is left to do."""
    with Receiver() as receiver:
        sender = dispatcher(redis, config(receiver.port))
        body = publish(redis, "hooked-1", receiver.url("/hooks/evalfleet"))

        drain(sender, ended(redis, "hooked-1"))

    (got,) = receiver.deliveries
    assert (got.path, got.body) == ("/hooks/evalfleet", body)
    assert got.body == redis.get(result_key("hooked-1"))
    assert verify(got.body, got.headers[HEADER], SECRET)
    assert not verify(got.body + b" ", got.headers[HEADER], SECRET)
    assert not verify(got.body, got.headers[HEADER], "another secret")
    assert (got.headers["Idempotency-Key"], got.headers["Evalfleet-Body"]) == ("hooked-1",
                                                                              "result")
    hook = webhook(redis, "hooked-1")
    assert (hook.state, hook.url, hook.body, answers(redis, "hooked-1")) == (
        "delivered", receiver.url("/hooks/evalfleet"), "result", ["200"])
    assert redis.zcard(WEBHOOKS_DUE) == redis.zcard(WEBHOOKS_PENDING) == 0
    assert sender.observer.kinds == ["2xx"] and sender.observer.ends == ["delivered"]  # type: ignore[attr-defined]


def test_a_500_is_retried_until_a_2xx(redis: Any) -> None:
    """500, 500, then 200: three attempts, each recorded, the same body every time."""
    with Receiver(then(Reply(500), Reply(500), Reply(200))) as receiver:
        sender = dispatcher(redis, config(receiver.port))
        body = publish(redis, "flaky-1", receiver.url())

        drain(sender, ended(redis, "flaky-1"))

    assert answers(redis, "flaky-1") == ["500", "500", "200"]
    assert [d.body for d in receiver.deliveries] == [body] * 3
    assert [d.headers["Evalfleet-Attempt"] for d in receiver.deliveries] == ["1", "2", "3"]
    assert webhook(redis, "flaky-1").state == "delivered"


def test_a_receiver_that_times_out_is_tried_again(redis: Any) -> None:
    """An answer later than the attempt's deadline is a timeout (the attempt ends at the
    deadline, however slowly the receiver answers); a slow answer within it is delivered."""
    with Receiver(then(Reply(200, delay_s=10.0), Reply(200, delay_s=0.2))) as receiver:
        sender = dispatcher(redis, config(receiver.port))
        publish(redis, "slow-1", receiver.url())

        drain(sender, ended(redis, "slow-1"))

    first, second = webhook(redis, "slow-1").attempts
    assert (first.answer, second.answer) == ("timeout", "200")
    assert first.ms < 5000 and second.ms >= 200  # cut at 0.5 s, not at the answer (10 s)


def test_a_receiver_that_refuses_connections_is_given_up_visibly(redis: Any) -> None:
    """Nothing listens: every attempt is a connection failure, until give_up_after_s;
    the delivery is then failed, with the reason, and counted."""
    port = free_port()  # closed: nothing listens there
    sender = dispatcher(redis, config(port, give_up_after_s=1.0))
    publish(redis, "refused-1", f"http://127.0.0.1:{port}/hook")

    drain(sender, ended(redis, "refused-1"))

    hook = webhook(redis, "refused-1")
    assert hook.state == "failed" and len(hook.attempts) >= 2
    assert all(a.answer.startswith("connection: ") for a in hook.attempts)
    assert hook.reason.startswith(f"no 2xx answer in {len(hook.attempts)} attempts over ")
    assert sender.observer.ends == ["failed"]  # type: ignore[attr-defined]
    assert redis.zcard(WEBHOOKS_PENDING) == 0


def test_a_cancelled_runs_result_is_delivered(redis: Any) -> None:
    """A cancel publishes the run's result: it is heard and delivered like any other."""
    with Receiver() as receiver:
        sender = dispatcher(redis, config(receiver.port))
        Lifecycle(redis, 600).queue("cancelled-1", None, None, callback_url=receiver.url())
        assert cancel(Lifecycle(redis, 600), "cancelled-1").what == "cancelled"

        drain(sender, ended(redis, "cancelled-1"))

    assert json.loads(receiver.deliveries[0].body)["outcome"] == "cancelled"


def test_a_result_heard_twice_is_delivered_once(redis: Any) -> None:
    """Two dispatchers (two workers) read the group; a re-read entry is scheduled once."""
    with Receiver() as receiver:
        one, two = dispatcher(redis, config(receiver.port)), dispatcher(redis, config(
            receiver.port))
        publish(redis, "once-1", receiver.url())
        one.hear(block_ms=10)
        entry_id = redis.xrange(RESULTS_STREAM)[0][0]
        one.schedule.plan("once-1", receiver.url(), entry_id)  # heard again

        drain(two, ended(redis, "once-1"))
        one.send_due()

    assert len(receiver.deliveries) == 1
    assert redis.xpending(RESULTS_STREAM, WEBHOOKS_GROUP)["pending"] == 0


def test_without_a_secret_nothing_is_sent(redis: Any) -> None:
    """The fleet never sends an unsigned delivery."""
    with Receiver() as receiver:
        sender = dispatcher(redis, config(receiver.port, secrets=()))
        publish(redis, "unsigned-1", receiver.url())

        drain(sender, ended(redis, "unsigned-1"))

    assert receiver.deliveries == []
    assert answers(redis, "unsigned-1") == [
        "refused: no signing secret (EVALFLEET_WEBHOOKS__SECRETS)"]


def test_a_sender_that_dies_mid_attempt_leaves_it_due_after_its_lease(redis: Any) -> None:
    """A claim is a lease: the delivery is due again once it passes (at least once)."""
    with Receiver() as receiver:
        sender = dispatcher(redis, config(receiver.port, timeout_s=0.1))  # lease 5.2 s
        publish(redis, "lease-1", receiver.url())
        sender.hear(block_ms=10)
        assert sender.schedule.claim(sender.config.lease_s) == ["lease-1"]
        sender.schedule.start("lease-1", 60.0)  # then the sender "dies"
        assert answers(redis, "lease-1") == ["sending"]
        assert sender.schedule.claim(sender.config.lease_s) == []
        redis.zadd(WEBHOOKS_DUE, {"lease-1": 0})  # the lease has run out

        drain(sender, ended(redis, "lease-1"))

    assert len(receiver.deliveries) == 1
    assert answers(redis, "lease-1") == ["lost: its sender stopped before an answer", "200"]


def test_a_delivery_past_its_time_fails_without_an_attempt(redis: Any) -> None:
    """No worker sent it within give_up_after_s (all were down): it fails when next
    claimed, without a late attempt, and the status says why."""
    with Receiver() as receiver:
        sender = dispatcher(redis, config(receiver.port, give_up_after_s=1.0))
        publish(redis, "late-1", receiver.url())
        sender.hear(block_ms=10)
        time.sleep(1.1)

        drain(sender, ended(redis, "late-1"))

    assert receiver.deliveries == []
    hook = webhook(redis, "late-1")
    assert (hook.state, hook.reason, hook.attempts) == (
        "failed", "not delivered within 1 s: no attempt was made (no worker was sending)",
        [])
    assert sender.observer.ends == ["failed"]  # type: ignore[attr-defined]


def test_no_connection_outlives_the_attempts_deadline(redis: Any) -> None:
    """A receiver that accepts and never answers: the attempt ends at its deadline."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        port = silent.getsockname()[1]
        sender = dispatcher(redis, config(port, give_up_after_s=0.3))
        publish(redis, "silent-1", f"http://127.0.0.1:{port}/hook")

        drain(sender, ended(redis, "silent-1"))

    assert set(answers(redis, "silent-1")) == {"timeout"}
    assert all(a.ms < 5000 for a in webhook(redis, "silent-1").attempts)  # deadline 0.5 s


def test_the_callback_url_is_recorded_by_submission_forwarding_and_admission(
        redis: Any, server: RedisServer) -> None:
    """However a run comes in — the client's submission, a plain XADD the intake's
    forwarder records, a request straight to the queue (the admission) — its record
    keeps its callback_url, so its result (or its cancel's) is delivered."""
    from evalfleet.tasks.platform import EvalfleetClient
    from evalfleet.tasks.platform.intake import IntakeForwarder, sender_app

    url = "https://hooks.example.com/in"
    client = EvalfleetClient(server.url)
    client.submit({"run_id": "via-client", "pack_ref": "p", "callback_url": url})
    client.close()
    redis.xadd("evalfleet:intake", {"request": json.dumps(
        {"run_id": "via-xadd", "pack_ref": "p", "callback_url": url})})
    forwarder = IntakeForwarder(redis, sender_app(server.url), consumer="test")
    forwarder.ensure_group()
    forwarder.forward_once(block_ms=10)
    Publisher(redis, 600, "w").admit("via-queue", callback_url=url)

    for run_id in ("via-client", "via-xadd", "via-queue"):
        found = RunStatus.from_record(run_id, redis.hgetall(status_key(run_id)))
        assert found is not None and found.callback_url == url, run_id


def test_a_rejected_requests_rejection_is_delivered_to_its_callback(redis: Any) -> None:
    """A request sent straight to the queue (no queued record), rejected for a field of
    its own: the admission records its callback_url, and the rejection is delivered."""
    from evalfleet.sandbox.profile import Profile
    from evalfleet.sandbox.testing.fake import FakeFactory
    from evalfleet.tasks.evaluation.pipeline import PipelineConfig, ProfileBounds
    from evalfleet.tasks.run_task import execute
    from evalfleet.tasks.task_context import Runtime

    with Receiver() as receiver:
        sender = dispatcher(redis, config(receiver.port))
        runtime = Runtime(config=PipelineConfig(profiles={"default": ProfileBounds(
            Profile("default", "fake"))}), factory=FakeFactory(), redis=redis,
            publisher=Publisher(redis, 600, "w"))
        body = {"run_id": "bad-1", "pack_ref": "p", "callback_url": receiver.url(),
                "no_such_field": 1}

        assert execute(runtime, None, body, enqueued_at=None) == "rejected"
        drain(sender, ended(redis, "bad-1"))

    delivered = json.loads(receiver.deliveries[0].body)
    assert (delivered["outcome"], delivered["errors"][0]["field"]) == ("rejected",
                                                                       "request.no_such_field")


def test_results_a_dead_dispatcher_read_are_claimed_by_another(redis: Any) -> None:
    """A worker that read results from the group and died before scheduling them: they
    stay pending in the group, and another worker's dispatcher claims them (after
    reclaim_after_ms, 60 s by default) and delivers them."""
    with Receiver() as receiver:
        alive = dispatcher(redis, config(receiver.port), reclaim_after_ms=0)
        publish(redis, "orphan-1", receiver.url())
        (read,) = redis.xreadgroup(WEBHOOKS_GROUP, "dead", {RESULTS_STREAM: ">"}, count=10)
        assert len(read[1]) == 1  # read by the dead worker's dispatcher, never scheduled

        drain(alive, ended(redis, "orphan-1"))

    assert len(receiver.deliveries) == 1
    assert redis.xpending(RESULTS_STREAM, WEBHOOKS_GROUP)["pending"] == 0
