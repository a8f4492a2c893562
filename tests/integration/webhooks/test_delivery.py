"""Webhooks against a real Redis and a real HTTP receiver on loopback (tasks.webhooks):
signed and verified as a receiver does, byte for byte, retried through refusals, timeouts,
500s and slow answers, never redirected, never sent where the policy forbids."""

from __future__ import annotations

import hashlib
import json
import shutil
import socket
import ssl
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import redis as redis_lib
from services import missing_service
from webhook_receiver import Receiver, Reply, always, then

from evalfleet.tasks.lifecycle import Lifecycle
from evalfleet.tasks.messages import RunResult
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
from evalfleet.tasks.status import RunStatus, Webhook
from evalfleet.tasks.webhooks.config import MatchHook, WebhookConfig
from evalfleet.tasks.webhooks.dispatcher import Dispatcher
from evalfleet.tasks.webhooks.signature import HEADER, verify
from evalfleet.workers.devtools.local_fleet import RedisServer, free_port

SECRET = "whsec-test-current"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RedisServer]:
    """A private Redis per test: the schedule's keys are the fleet's, not per run."""
    if shutil.which("redis-server") is None:
        missing_service("redis-server", FileNotFoundError("not on PATH (scripts/setup.sh)"))
    started = RedisServer(free_port(), tmp_path).start()
    yield started
    started.stop()


@pytest.fixture
def redis(server: RedisServer) -> Iterator[Any]:
    client = redis_lib.Redis.from_url(server.url)
    yield client
    client.close()


@dataclass
class Counted:
    """An observer that keeps what it heard."""

    kinds: list[str] = field(default_factory=list)
    ends: list[str] = field(default_factory=list)

    def attempted(self, kind: str) -> None:
        self.kinds.append(kind)

    def finished(self, state: str) -> None:
        self.ends.append(state)


def config(*ports: int, **overrides: Any) -> WebhookConfig:
    """Loopback allowed explicitly, short retries (0.05 s doubling to 0.2 s, 2 s in all)."""
    settings: dict[str, Any] = {
        "allow": tuple(f"127.0.0.1:{port}" for port in ports), "networks": ("127.0.0.0/8",),
        "secrets": (SECRET,), "timeout_s": 0.5, "first_retry_s": 0.05, "max_retry_s": 0.2,
        "give_up_after_s": 2.0}
    return WebhookConfig(**{**settings, **overrides})


def dispatcher(redis: Any, webhooks: WebhookConfig, **extra: Any) -> Dispatcher:
    made = Dispatcher(redis, webhooks, consumer="test", observer=Counted(), **extra)
    made.ensure_group()
    return made


def publish(redis: Any, run_id: str, callback: str | None = None, match: str | None = None,
            **fields: Any) -> bytes:
    """Queue ``run_id`` (with its callback) and publish its result; the body published."""
    Lifecycle(redis, 600).queue(run_id, match, None, callback_url=callback)
    result = RunResult(run_id=run_id, outcome="scored", match=match, **fields)
    body = result.to_json()
    assert Publisher(redis, 600, "w").publish(result, body)
    return body.encode()


def webhook(redis: Any, run_id: str) -> Webhook:
    found = RunStatus.from_record(run_id, redis.hgetall(status_key(run_id)))
    assert found is not None and found.webhook is not None
    return found.webhook


def drain(sender: Dispatcher, done: Callable[[], bool], timeout: float = 15.0) -> None:
    """Hear and send until ``done`` (bounded)."""
    deadline = time.monotonic() + timeout
    while not done():
        assert time.monotonic() < deadline, f"not done within {timeout} s"
        sender.hear(block_ms=10)
        sender.send_due()
        time.sleep(0.01)


def ended(redis: Any, *run_ids: str) -> Callable[[], bool]:
    def check() -> bool:
        states = [redis.hget(status_key(r), "webhook") for r in run_ids]
        return all(s in (b"delivered", b"failed") for s in states)
    return check


def answers(redis: Any, run_id: str) -> list[str]:
    return [a.answer for a in webhook(redis, run_id).attempts]


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


def test_a_redirect_is_never_followed(redis: Any) -> None:
    """A 302 to an address the fleet may not reach (another port on loopback, not on the
    allowlist): never followed, recorded as such, and the forbidden receiver hears nothing."""
    with Receiver() as forbidden, Receiver(always(Reply(302, headers={
            "Location": forbidden.url("/steal")}))) as receiver:
        sender = dispatcher(redis, config(receiver.port, give_up_after_s=0.5))
        publish(redis, "redirected-1", receiver.url())

        drain(sender, ended(redis, "redirected-1"))

    assert forbidden.deliveries == []
    assert set(answers(redis, "redirected-1")) == {"302 not followed"}
    assert webhook(redis, "redirected-1").state == "failed"


def test_a_host_or_port_off_the_allowlist_is_never_contacted(redis: Any) -> None:
    """The receiver listens, but its port is not allowed: one attempt, refused by the
    policy (never sent, never retried)."""
    with Receiver() as receiver:
        sender = dispatcher(redis, config(receiver.port + 1))
        publish(redis, "unlisted-1", receiver.url())

        drain(sender, ended(redis, "unlisted-1"))

    assert receiver.deliveries == []
    hook = webhook(redis, "unlisted-1")
    assert hook.state == "failed" and hook.reason == hook.attempts[0].answer
    assert answers(redis, "unlisted-1") == [
        f"refused: 127.0.0.1:{receiver.port} is not in EVALFLEET_WEBHOOKS__ALLOW"]
    assert sender.observer.kinds == ["refused"]  # type: ignore[attr-defined]


def rebinding(address: str) -> Callable[[str, int], list[str]]:
    """A resolver under an attacker's control: every name resolves to ``address``."""
    return lambda host, port: [address]


def test_a_name_that_resolves_to_loopback_is_refused(redis: Any) -> None:
    """DNS rebinding: an allowed name resolves to a loopback address, which the operator
    did not allow (no EVALFLEET_WEBHOOKS__NETWORKS): refused, nothing sent."""
    with Receiver() as receiver:
        webhooks = config(networks=(), allow=(f"hooks.example.test:{receiver.port}",))
        sender = dispatcher(redis, webhooks, resolve=rebinding("127.0.0.1"))
        publish(redis, "rebound-1", f"http://hooks.example.test:{receiver.port}/hook")

        drain(sender, ended(redis, "rebound-1"))

    assert receiver.deliveries == []
    assert answers(redis, "rebound-1") == [
        "refused: 127.0.0.1 is not a public address (and not in EVALFLEET_WEBHOOKS__NETWORKS)"]


@pytest.mark.parametrize("address", ["::ffff:127.0.0.1", "169.254.169.254", "10.0.0.1",
                                     "0.0.0.0"])
def test_names_that_resolve_to_other_private_addresses_are_refused(redis: Any,
                                                                   address: str) -> None:
    """The metadata service, a private network, an IPv4-mapped loopback, the unspecified
    address: refused before any connection."""
    webhooks = config(networks=(), allow=("hooks.example.test:80",))
    sender = dispatcher(redis, webhooks, resolve=rebinding(address))
    publish(redis, "rebound-2", "http://hooks.example.test/hook")

    drain(sender, ended(redis, "rebound-2"))

    (answer,) = answers(redis, "rebound-2")
    assert answer.startswith("refused: ") and "is not a public address" in answer


def test_the_connection_goes_to_the_address_that_was_checked(redis: Any) -> None:
    """The name is resolved once, by the policy's resolver, and the connection goes to
    that address (never resolved again); the Host header stays the URL's."""
    with Receiver() as receiver:
        webhooks = config(allow=(f"hooks.example.test:{receiver.port}",))
        sender = dispatcher(redis, webhooks, resolve=rebinding("127.0.0.1"))
        publish(redis, "pinned-1", f"http://hooks.example.test:{receiver.port}/hook")

        drain(sender, ended(redis, "pinned-1"))

    (got,) = receiver.deliveries
    assert (got.peer, got.headers["Host"]) == ("127.0.0.1",
                                               f"hooks.example.test:{receiver.port}")


def test_a_result_past_max_body_bytes_is_delivered_as_a_summary(redis: Any) -> None:
    """Past the operator's limit: a summary, signed, whose result_url is null (no archive)
    and which says where the whole result is, with its size and SHA-256."""
    with Receiver() as receiver:
        sender = dispatcher(redis, config(receiver.port, max_body_bytes=200))
        body = publish(redis, "large-1", receiver.url(), reason="x" * 500)

        drain(sender, ended(redis, "large-1"))

    (got,) = receiver.deliveries
    summary = json.loads(got.body)
    assert verify(got.body, got.headers[HEADER], SECRET)
    assert got.headers["Evalfleet-Body"] == "summary" and webhook(redis, "large-1").body \
        == "summary"
    assert (summary["kind"], summary["run_id"], summary["outcome"], summary["result_url"]) \
        == ("summary", "large-1", "scored", None)
    assert (summary["result_bytes"], summary["result_sha256"]) == (
        len(body), hashlib.sha256(body).hexdigest())
    assert "evalfleet:result:large-1" in summary["result_omitted"]


def test_a_summary_carries_the_archive_link_when_there_is_one(redis: Any) -> None:
    """The seam the archive plugs into: a link for the whole result."""
    with Receiver() as receiver:
        sender = dispatcher(redis, config(receiver.port, max_body_bytes=10),
                            link=lambda run_id, body, tenant=None:
                            f"https://archive.example/{run_id}")
        publish(redis, "linked-1", receiver.url())

        drain(sender, ended(redis, "linked-1"))

    assert json.loads(receiver.deliveries[0].body)["result_url"] == \
        "https://archive.example/linked-1"


def test_a_match_gets_its_url_and_secrets_and_rotation_signs_with_each(redis: Any) -> None:
    """A run of a match the operator configured goes to the match's URL, signed with the
    match's secrets; while two secrets are active a receiver holding either verifies."""
    with Receiver() as receiver:
        hook = MatchHook(url=receiver.url("/match-7"), secrets=("new-secret", "old-secret"))
        sender = dispatcher(redis, config(receiver.port, matches={"match-7": hook}))
        publish(redis, "m7-a", match="match-7")
        publish(redis, "plain-1")  # no callback, no configured match: nothing to deliver

        drain(sender, ended(redis, "m7-a"))

    (got,) = receiver.deliveries
    assert got.path == "/match-7"
    assert verify(got.body, got.headers[HEADER], "new-secret")
    assert verify(got.body, got.headers[HEADER], "old-secret")
    assert not verify(got.body, got.headers[HEADER], SECRET)
    assert redis.hget(status_key("plain-1"), "webhook") is None


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


def certificate(tmp_path: Path, name: str) -> tuple[Path, ssl.SSLContext]:
    """A self-signed certificate for ``name`` (its file, to trust) and a server context."""
    if shutil.which("openssl") is None:
        missing_service("openssl", FileNotFoundError("not on PATH"))
    cert, key = tmp_path / f"{name}.pem", tmp_path / f"{name}.key"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-keyout", str(key), "-out", str(cert), "-subj", f"/CN={name}",
                    "-addext", f"subjectAltName=DNS:{name}"],
                   check=True, capture_output=True, timeout=60)
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(cert, key)
    return cert, server


def test_https_verifies_the_urls_host_on_the_pinned_address(redis: Any,
                                                            tmp_path: Path) -> None:
    """The connection goes to the checked address, and TLS still verifies the URL's
    host: a certificate for that name is delivered to, one for another name is not."""
    trusted, good = certificate(tmp_path, "hooks.example.test")
    stranger, bad = certificate(tmp_path, "other.example.test")
    with Receiver(tls=good) as receiver, Receiver(tls=bad) as impostor:
        for run_id, target, ca in (("tls-1", receiver, trusted), ("tls-2", impostor, stranger)):
            webhooks = config(allow=(f"hooks.example.test:{target.port}",),
                              ca_file=str(ca), give_up_after_s=0.3)
            sender = dispatcher(redis, webhooks, resolve=rebinding("127.0.0.1"))
            publish(redis, run_id, target.url(host="hooks.example.test"))

            drain(sender, ended(redis, run_id))

    assert answers(redis, "tls-1") == ["200"] and len(receiver.deliveries) == 1
    assert impostor.deliveries == [] and webhook(redis, "tls-2").state == "failed"
    assert all("certificate verify failed" in answer for answer in answers(redis, "tls-2"))


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


def test_a_summary_links_the_archived_result_once_it_is_archived(redis: Any,
                                                                 seaweedfs: Any) -> None:
    """With an archive on a real S3 server: until the archiver has written the run the
    delivery waits (attempts recorded ``deferred``, nothing sent); then the summary's
    result_url is a presigned link that serves the archived record, whose result is the
    published text byte for byte (the summary's SHA-256)."""
    import gzip
    import urllib.request
    import uuid

    from evalfleet.tasks.archive import Archive, ArchivedRun
    from evalfleet.workers.archiving import result_link
    from evalfleet.workers.settings import Settings

    url = seaweedfs.url(f"hooks-{uuid.uuid4().hex[:8]}")
    archive = Archive.at(url)
    assert archive is not None
    archive.store.prepare()
    link = result_link(Settings(archive={"url": url}, webhooks={"give_up_after_s": 60}))
    with Receiver() as receiver:
        sender = dispatcher(redis, config(receiver.port, max_body_bytes=10,
                                          give_up_after_s=60.0), link=link)
        body = publish(redis, "archived-1", receiver.url(), reason="x" * 100)
        for _ in range(3):
            sender.hear(block_ms=10)
            sender.send_due()
            time.sleep(0.1)
        waited = list(receiver.deliveries)
        archive.write(ArchivedRun("archived-1", body, {"status": "scored"}), "2026-11-29",
                      None)
        drain(sender, ended(redis, "archived-1"))

    assert waited == [] and answers(redis, "archived-1")[0].startswith("not sent: the result "
                                                                        "is not archived yet")
    (got,) = receiver.deliveries
    summary = json.loads(got.body)
    with urllib.request.urlopen(summary["result_url"], timeout=10) as fetched:
        record = json.loads(gzip.decompress(fetched.read()))
    assert record["result"].encode() == body
    assert hashlib.sha256(record["result"].encode()).hexdigest() == summary["result_sha256"]
