"""Which script queues a message (tasks.broker.kombu_channel): once per intake entry for a
forwarded run's first message, as any message for everything else — a Celery retry
carries the first message's headers and must be queued all the same."""

from __future__ import annotations

from evalfleet.tasks.broker.kombu_channel import ONCE_HEADER, _put_args
from evalfleet.tasks.broker.lua import PUT, PUT_ONCE

ONCE = {ONCE_HEADER: ["evalfleet:status:r1", "1-0"]}


def test_a_forwarded_runs_first_message_is_queued_once_per_entry() -> None:
    script, count, *keys = _put_args("q", "bell", {"headers": {**ONCE, "retries": 0}})[:5]
    assert (script, count, keys) == (PUT_ONCE, 3, ["q", "bell", "evalfleet:status:r1"])


def test_a_retry_of_it_is_queued_as_any_message() -> None:
    assert _put_args("q", "bell", {"headers": {**ONCE, "retries": 1}})[:2] == (PUT, 2)


def test_a_message_without_the_header_is_queued_as_any_message() -> None:
    assert _put_args("q", "bell", {"headers": {"retries": 0}})[:2] == (PUT, 2)
    assert _put_args("q", "bell", {})[:2] == (PUT, 2)
