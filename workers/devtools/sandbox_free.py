"""A sandbox-free run: a pack that scores only the submitted events.

Nothing to seed, run, test or capture, so a worker acquires no sandbox for it: what such a
run costs is the queue layer's (Celery, parsing and scoring, publication). The scale
benchmark drains these, and the tests use them where a sandbox would only slow them down.
"""

from __future__ import annotations

import uuid
from typing import Any

from evalfleet.scoring.record.event_types import RUN_COMPLETED, RUN_STARTED

#: One validator on the submitted final output.
PACK: dict[str, Any] = {
    "pack": {"slug": "events-only", "name": "Events only"},
    "version": {"evaluation_spec": {
        "name": "events-only", "version_number": 1, "judge_mode": "deterministic",
        "validators": [{"key": "says_42", "type": "contains", "target": "final_output",
                        "expected_from": "literal:42"}],
        "scorecard": {"dimensions": ["correctness"]}}},
}
#: A run that says 42: the pack scores it a win (1000).
EVENTS: list[dict[str, Any]] = [
    {"type": RUN_STARTED, "sequence_number": 1,
     "occurred_at": "2026-01-01T00:00:00Z", "payload": {}},
    {"type": RUN_COMPLETED, "sequence_number": 2,
     "occurred_at": "2026-01-01T00:00:01Z", "payload": {"final_output": "42"}}]


def request(prefix: str = "events") -> dict[str, Any]:
    """A winning sandbox-free run request (its own run id, at most 28 characters). The pack
    and events are shared, not copied (the client validates them into its own models):
    copy them before changing them."""
    return {"run_id": f"{prefix}-{uuid.uuid4().hex[:22]}"[:28], "pack": PACK,
            "submission": {"events": EVENTS}}
