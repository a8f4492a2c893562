"""Celery's task events, which Flower and celery-exporter read, leave a worker in batches."""

from __future__ import annotations

import base64
import json
import time
import uuid
from typing import Any

EVENTS_PACK: dict[str, Any] = {
    "pack": {"slug": "events-only"},
    "version": {"evaluation_spec": {
        "name": "events-only", "version_number": 1, "judge_mode": "deterministic",
        "validators": [{"key": "says_42", "type": "contains", "target": "final_output",
                        "expected_from": "literal:42"}],
        "scorecard": {"dimensions": ["correctness"]}}},
}
EVENTS = [{"type": "system.run.started", "sequence_number": 1,
           "occurred_at": "2026-01-01T00:00:00Z", "payload": {}},
          {"type": "system.run.completed", "sequence_number": 2,
           "occurred_at": "2026-01-01T00:00:01Z", "payload": {"final_output": "42"}}]
WANTED = ("task-received", "task-started", "task-succeeded")


def test_every_run_is_seen_by_monitors_in_fewer_publications(fleet: Any, client: Any) -> None:
    """A burst of runs: each one's received, started and succeeded events reach a subscriber
    of Celery's event exchange, and the events share publications (fewer than one each)."""
    run_ids = [f"events-{uuid.uuid4().hex[:12]}" for _ in range(12)]
    with client.redis.pubsub() as pubsub:
        pubsub.psubscribe("*celeryev*")
        assert pubsub.get_message(timeout=10)["type"] == "psubscribe"
        client.submit_many({"run_id": run_id, "pack": EVENTS_PACK,
                            "submission": {"events": EVENTS}} for run_id in run_ids)
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
