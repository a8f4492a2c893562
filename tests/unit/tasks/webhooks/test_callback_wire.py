"""``callback_url`` on the wire: its shape, an older request without it, its record."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from evalfleet.tasks.decoding import life_of
from evalfleet.tasks.messages import RunRequest
from evalfleet.tasks.status import RunStatus

OLD = {"schema_version": 1, "run_id": "r1", "pack_ref": "p", "priority": 5,
       "submission": {"commands": [{"run": "echo hi"}]}, "metadata": {"v": "0.1"}}


def test_a_request_as_an_older_client_sends_it_is_unchanged() -> None:
    request = RunRequest.model_validate(OLD)

    assert request.callback_url is None
    assert "callback_url" not in request.model_dump_json(exclude_none=True)


def test_a_callback_url_is_kept() -> None:
    url = "https://hooks.example.com/evalfleet?team=7"
    assert RunRequest.model_validate({**OLD, "callback_url": url}).callback_url == url


@pytest.mark.parametrize("url", ["ftp://hooks.example.com/", "/relative", "https://",
                                 "https://u:p@hooks.example.com/", "https://h.example/#frag",
                                 "https://h.example:0/", "https://h.example:99999/",
                                 "https://h.example/" + "a" * 2048])
def test_a_callback_url_that_is_not_one_is_rejected(url: str) -> None:
    with pytest.raises(ValidationError, match="callback_url"):
        RunRequest.model_validate({**OLD, "callback_url": url})


def test_the_worker_reads_the_callback_before_parsing() -> None:
    """A request rejected for another reason keeps its callback (its rejection is
    delivered); an invalid callback is none, and the match is kept."""
    url = "https://hooks.example.com/in"
    assert life_of({"callback_url": url, "match": "m", "bogus": 1}).callback_url == url
    assert life_of({"callback_url": "ftp://x/", "match": "m"}).match == "m"
    assert life_of({"callback_url": "ftp://x/", "match": "m"}).callback_url is None
    assert life_of({"callback_url": url, "match": "bad match!"}).callback_url == url


def test_the_status_shows_the_delivery_and_each_attempt() -> None:
    record = {b"status": b"scored", b"scored_at": b"12.5", b"callback_url": b"https://h/",
              b"webhook": b"failed", b"webhook.url": b"https://h/", b"webhook.since": b"12.6",
              b"webhook.body": b"result", b"webhook.reason": b"no 2xx answer",
              b"webhook.attempts": b"2",
              b"webhook.attempt.2": b'{"n": 2, "at": 14.0, "answer": "timeout", "ms": 10000}',
              b"webhook.attempt.1": b'{"n": 1, "at": 13.0, "answer": "500", "ms": 3.5}'}

    status = RunStatus.from_record("r1", record)

    assert status is not None and status.webhook is not None
    assert (status.at, status.callback_url) == ({"scored": 12.5}, "https://h/")
    assert (status.webhook.state, status.webhook.since, status.webhook.reason) == (
        "failed", 12.6, "no 2xx answer")
    assert [(a.n, a.answer) for a in status.webhook.attempts] == [(1, "500"), (2, "timeout")]
    assert RunStatus.from_record("r2", {b"status": b"queued"}).webhook is None  # type: ignore[union-attr]


def test_evalfleet_status_says_how_the_delivery_went() -> None:
    from evalfleet.workers.fleet_cli import status_line

    base = {b"status": b"scored", b"scored_at": b"0", b"webhook.url": b"https://h/"}
    tried = {b"webhook.attempt.1": b'{"n": 1, "at": 1, "answer": "500"}'}
    lines = [status_line(RunStatus.from_record("r1", {**base, **extra}))
             for extra in ({b"webhook": b"pending", **tried},
                           {b"webhook": b"failed", b"webhook.reason": b"refused: nope", **tried},
                           {b"webhook": b"delivered", b"webhook.attempt.2":
                            b'{"n": 2, "at": 2, "answer": "200"}', **tried})]

    assert [line.split("; ", 1)[1] for line in lines] == [
        "webhook pending (1 attempt, last: 500)", "webhook failed after 1 attempt: refused: nope",
        "webhook delivered (2 attempts)"]
    assert "webhook" not in status_line(RunStatus.from_record("r2", {b"status": b"queued"}))
