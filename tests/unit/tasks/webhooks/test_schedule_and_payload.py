"""The retry schedule's waits and the webhook's body (tasks.webhooks.schedule, .payload)."""

from __future__ import annotations

import hashlib
import json

from evalfleet.tasks.messages import RunResult
from evalfleet.tasks.webhooks.payload import payload
from evalfleet.tasks.webhooks.schedule import backoff_s


def test_waits_double_with_jitter_up_to_the_ceiling() -> None:
    for attempt, full in [(1, 10.0), (2, 20.0), (3, 40.0), (9, 2560.0), (10, 3600.0),
                          (40, 3600.0)]:
        waits = [backoff_s(attempt, 10.0, 3600.0) for _ in range(200)]
        assert all(full / 2 <= w <= full for w in waits), attempt
        assert len(set(waits)) > 1  # jittered: senders spread out


def test_a_result_that_fits_is_sent_byte_for_byte() -> None:
    """Never parsed and written again: a signature inside the result still verifies."""
    raw = b'{"run_id": "r1",   "outcome": "scored", "signature": {"sig": "..."}}'
    assert payload(raw, 1000) .body is raw


def test_past_the_limit_a_summary_without_a_link() -> None:
    result = RunResult(run_id="r1", outcome="scored", match="m", reason="x" * 100)
    raw = result.to_json().encode()

    sent = payload(raw, 50)

    summary = json.loads(sent.body)
    assert sent.kind == "summary"
    assert {k: summary[k] for k in ("run_id", "outcome", "match", "result_url",
                                    "result_bytes", "result_sha256")} == {
        "run_id": "r1", "outcome": "scored", "match": "m", "result_url": None,
        "result_bytes": len(raw), "result_sha256": hashlib.sha256(raw).hexdigest()}
    assert "over this fleet's webhook limit of 50" in summary["result_omitted"]
