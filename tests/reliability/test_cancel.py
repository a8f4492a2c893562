"""A run's whole life through a real fleet: its status record, cancel at every stage, a
match's runs, expiry (issue 41). Every run ends with exactly one publication, and no
sandbox outlives a cancelled run."""

from __future__ import annotations

import json
import os
import signal
import time
from datetime import UTC, datetime, timedelta
from typing import Any

from fleet_support import PrivateFleet, children, pack, run_request, wait_for

from evalfleet.tasks.messages import RunRequest

PARKED = json.dumps({"parked": {"image": "evalfleet/python:latest"}})
LOOP = "while true; do sleep 0.1; done"
#: Bound on the sandbox's end after a cancel (bench/cancel.py measures it: p95 0.3-0.7 s).
ENDED_WITHIN_S = 30


def slow_tests_pack() -> dict[str, Any]:
    """A pack whose hidden test runs a minute (the candidate's command is quick)."""
    found = pack()
    spec = found["version"]["evaluation_spec"]
    spec["post_execution_checks"] = [{"key": "answer", "type": "file_capture",
                                      "path": "/workspace/answer.txt"}]
    spec["validators"].append({"key": "slow", "type": "code_execution", "target": "file:answer",
                               "config": {"test_command": "sleep 60; echo '1 passed'",
                                          "timeout_ms": 90_000}})
    return found


def sandbox_of(fleet: PrivateFleet, run_id: str) -> list[Any]:
    return fleet.containers(**{"evalfleet.run_id": run_id})


def cancelled_while_running(fleet: PrivateFleet, client: Any, request: RunRequest,
                            settle_s: float = 0.0) -> tuple[Any, float]:
    """Submit ``request``, cancel it once its sandbox runs (and ``settle_s`` more); the
    cancel's answer and how long the sandbox outlived it."""
    client.submit(request)
    wait_for(lambda: sandbox_of(fleet, request.run_id), 60, "the run's sandbox did not start")
    time.sleep(settle_s)
    asked = time.monotonic()
    answer = client.cancel(request.run_id)
    wait_for(lambda: not sandbox_of(fleet, request.run_id), ENDED_WITHIN_S,
             "the cancelled run's sandbox was not removed")
    return answer, time.monotonic() - asked


def test_a_run_is_cancelled_at_every_stage_and_published_once(
        private_fleet: PrivateFleet, runtime: str) -> None:
    """Queued (on a queue no worker serves yet): it never starts, even once a worker comes.
    Running its command, and running its hidden tests: the sandbox ends and is removed.
    After publication: left as it is, and the answer says so. Each run of the match is
    listed with its status, and ``wait_many`` yields each result once. On each runtime."""
    node = private_fleet.start("cancel", ["-c", "2"],
                               profiles=json.dumps({"default": {"runtime": runtime}}))
    client = private_fleet.client()
    match = f"match-{time.time_ns()}"
    parked = run_request("parked", profile="parked", match=match)
    looping = run_request("looping", LOOP, match=match)
    testing = RunRequest(run_id=f"testing-{time.time_ns()}", pack=slow_tests_pack(), match=match,
                         submission={"files": {"answer.txt": "42"},
                                     "commands": [{"run": "echo hi"}]})
    done = run_request("done", match=match)

    client.submit(parked)
    assert client.status(parked.run_id).status == "queued"
    assert client.cancel(parked.run_id).was == "queued"
    command, command_s = cancelled_while_running(private_fleet, client, looping)
    tests, tests_s = cancelled_while_running(private_fleet, client, testing, settle_s=4)
    client.submit(done)
    finished = client.wait(done.run_id, timeout=120)
    late = client.cancel(done.run_id)
    private_fleet.start("parked-worker", queues='["parked"]', profiles=PARKED)

    assert (command.what, command.was, tests.what, tests.was) == (
        "cancelled", "running", "cancelled", "running")
    assert (late.what, late.was, finished.outcome) == ("finished", "scored", "scored")
    assert client.result(done.run_id) == finished  # left as it was
    results = {r.run_id: r for r in client.wait_many(match, timeout=60)}
    assert {r.run_id: r.outcome for r in results.values()} == {
        parked.run_id: "cancelled", looping.run_id: "cancelled",
        testing.run_id: "cancelled", done.run_id: "scored"}
    assert all(r.scorecard is None and r.match == match for r in results.values()
               if r.outcome == "cancelled")
    listed = {s.run_id: s for s in client.runs(match)}
    assert next(iter(listed)) == parked.run_id  # in submission order
    assert {r: s.status for r, s in listed.items()} == {
        r: result.outcome for r, result in results.items()}
    assert "running" in listed[looping.run_id].at and "cancelled" in listed[looping.run_id].at
    assert listed[done.run_id].worker == node.worker_id
    time.sleep(3)  # the parked worker has long taken the cancelled run off its queue
    assert not sandbox_of(private_fleet, parked.run_id)  # it never started
    assert "running" not in listed[parked.run_id].at
    assert set(private_fleet.results_streamed(set(results)).values()) == {1}
    assert max(command_s, tests_s) < ENDED_WITHIN_S
    assert node.alive and client.wait(client.submit(run_request("after")), 60).outcome \
        == "scored"


def test_a_worker_killed_during_the_cancel_leaves_one_result_and_no_sandbox(
        private_fleet: PrivateFleet) -> None:
    """The pool process running the run is SIGKILLed as the cancel arrives: the run is
    redelivered, finds its result (the cancel's) and never runs again; the killed run's
    sandbox is reaped."""
    node = private_fleet.start("killed")
    client = private_fleet.client()
    request = run_request("killed", LOOP)
    client.submit(request)
    wait_for(lambda: sandbox_of(private_fleet, request.run_id), 60, "no sandbox started")
    (child,) = children(node.process.pid)  # type: ignore[union-attr]
    os.kill(child, signal.SIGKILL)
    answer = client.cancel(request.run_id)

    assert (answer.what, answer.was) == ("cancelled", "running")
    wait_for(lambda: not sandbox_of(private_fleet, request.run_id), 60,
             "the killed run's sandbox was not reaped")
    assert client.wait(request.run_id, timeout=10).outcome == "cancelled"
    time.sleep(3)  # the redelivered run has been taken and dropped
    assert private_fleet.results_streamed({request.run_id}) == {request.run_id: 1}
    assert not sandbox_of(private_fleet, request.run_id)
    assert client.status(request.run_id).status == "cancelled"


def test_a_run_not_started_by_its_deadline_expires(private_fleet: PrivateFleet) -> None:
    """``expires_at`` passed while it waited: it never starts and ends ``expired`` (a draw
    with no rating change); one still in time runs as usual."""
    private_fleet.start("expiry")
    client = private_fleet.client()
    past = datetime.now(UTC) - timedelta(seconds=1)
    late = run_request("late", expires_at=past, attempt_number=2)
    timely = run_request("timely", expires_at=datetime.now(UTC) + timedelta(hours=1))
    client.submit_many([late, timely])

    expired, scored = client.wait(late.run_id, 60), client.wait(timely.run_id, 60)

    assert (expired.outcome, expired.scorecard, scored.outcome) == ("expired", None, "scored")
    assert expired.rating is not None and expired.rating.category == "expired"
    assert (expired.rating.rating_change, expired.rating.attempt_number) == (False, 2)
    status = client.status(late.run_id)
    assert status.status == "expired" and "running" not in status.at
    assert status.expires_at == past.timestamp()
    assert not sandbox_of(private_fleet, late.run_id)
