"""What a submission's replies mean (:mod:`tasks.platform.submission`), shared by both
clients: taken runs, refused runs and the runs after them, round trips that never
answered."""

from __future__ import annotations

import pytest
import redis

from evalfleet.tasks.lifecycle import submission
from evalfleet.tasks.messages import RunRequest
from evalfleet.tasks.platform.submission import SubmitError, calls, chunks, lost, settle
from evalfleet.tasks.redis_keys import ARCHIVE_REFUSAL_KEY, INTAKE_STREAM

FULL = redis.OutOfMemoryError("OOM command not allowed when used memory > 'maxmemory'.")


def requests(count: int) -> list[RunRequest]:
    return [RunRequest(run_id=f"r{i}", pack_ref="p", match="m") for i in range(count)]


def test_a_round_trip_redis_took_whole_adds_its_runs() -> None:
    runs = requests(4)

    assert settle(["r0", "r1"], runs[2:], [1, 0], runs) == ["r0", "r1", "r2", "r3"]


def test_refused_runs_and_every_later_one_are_not_enqueued() -> None:
    """Redis said which it refused: none is uncertain; the message says Redis is full."""
    runs = requests(5)

    with pytest.raises(SubmitError) as raised:
        settle(["r0"], runs[1:3], [1, FULL], runs)

    assert raised.value.enqueued == ["r0", "r1"]
    assert raised.value.not_enqueued == ["r2", "r3", "r4"]
    assert raised.value.uncertain == []
    assert "Redis is full" in str(raised.value)


def test_a_round_trip_that_never_answered_is_uncertain() -> None:
    runs = requests(5)

    raised = lost(["r0", "r1"], runs[2:4], runs, redis.ConnectionError("gone"))

    assert (raised.enqueued, raised.not_enqueued) == (["r0", "r1"], ["r2", "r3", "r4"])
    assert raised.uncertain == ["r2", "r3"]
    assert "could not be reached" in str(raised)


def test_each_run_is_one_script_call_into_the_intake() -> None:
    """The entry's JSON leaves out unset fields; the call names the intake stream."""
    (call,) = calls(requests(1), ttl_s=60)

    assert call.keys == ["evalfleet:status:r0", "evalfleet:match:m", INTAKE_STREAM]
    assert call.args[:5] == [60, "m", "", "r0", ""]
    assert call.args[6] == ARCHIVE_REFUSAL_KEY  # read only: an argument (tenants' ACLs)
    assert call.args[5] == '{"schema_version":1,"run_id":"r0","pack_ref":"p",' \
        '"submission":{"files":{},"commands":[]},"priority":5,"peers":[],"metadata":{},' \
        '"match":"m"}'
    assert call.script == submission("{}", "r0", None, None, 1).script
    assert [len(part) for part in chunks(requests(5), 2)] == [2, 2, 1]
