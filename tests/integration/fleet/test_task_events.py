"""Celery's task events, which Flower and celery-exporter read, leave a worker in batches."""

from __future__ import annotations

import base64
import json
import time
from typing import Any

from evalfleet.workers.devtools import sandbox_free

WANTED = ("task-received", "task-started", "task-succeeded")


def test_every_run_is_seen_by_monitors_in_fewer_publications(fleet: Any, client: Any) -> None:
    """A burst of runs: each one's received, started and succeeded events reach a subscriber
    of Celery's event exchange, and the events share publications (fewer than one each)."""
    requests = [sandbox_free.request() for _ in range(12)]
    run_ids = [r["run_id"] for r in requests]
    with client.redis.pubsub() as pubsub:
        pubsub.psubscribe("*celeryev*")
        assert pubsub.get_message(timeout=10)["type"] == "psubscribe"
        client.submit_many(requests)
        assert all(client.wait(run_id, timeout=120).outcome == "scored" for run_id in run_ids)
        publications = _publications(pubsub, lambda seen: _complete(seen, run_ids))

    seen = [event for events in publications for event in events]
    assert _complete(seen, run_ids), _kinds_by_run(seen)
    task_events = [event for event in seen if event["type"].startswith("task-")]
    task_publications = [p for p in publications if p and p[0]["type"].startswith("task-")]
    assert len(task_publications) < len(task_events)


def _publications(pubsub: Any, done: Any, timeout: float = 30.0) -> list[list[dict[str, Any]]]:
    """Every publication on the event exchange (a list of events each) until ``done``."""
    found: list[list[dict[str, Any]]] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not done([e for p in found for e in p]):
        message = pubsub.get_message(timeout=0.5)
        if message and message["type"] == "pmessage":
            found.append(_events_of(message["data"]))
    return found


def _events_of(data: bytes) -> list[dict[str, Any]]:
    """The events in one kombu message on the Redis transport (base64 JSON body)."""
    envelope = json.loads(data)
    body = json.loads(base64.b64decode(envelope["body"]))
    return body if isinstance(body, list) else [body]


def _kinds_by_run(seen: list[dict[str, Any]]) -> dict[str, set[str]]:
    """Event types by run id (a task's uuid is named by its ``task-received`` args)."""
    runs = {e["uuid"]: e["args"] for e in seen if e["type"] == "task-received"}
    kinds: dict[str, set[str]] = {}
    for event in seen:
        if event.get("uuid") in runs:
            kinds.setdefault(runs[event["uuid"]], set()).add(event["type"])
    return kinds


def _complete(seen: list[dict[str, Any]], run_ids: list[str]) -> bool:
    kinds = _kinds_by_run(seen)
    return all(set(WANTED) <= kinds.get(f"[run {run_id}]", set()) for run_id in run_ids)
