"""What a webhook carries, against a real Redis and a receiver on loopback: a summary past
the size limit, with a link to the archived result once it is archived; a match's own URL
and secrets, each signing through a rotation."""

from __future__ import annotations

import hashlib
import json
import time
from typing import Any

from delivery_support import SECRET, answers, config, dispatcher, drain, ended, publish, webhook
from webhook_receiver import Receiver

from evalfleet.tasks.redis_keys import (
    status_key,
)
from evalfleet.tasks.webhooks.config import MatchHook
from evalfleet.tasks.webhooks.signature import HEADER, verify


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
