"""Losing the Redis primary (issue 46, item 2), with real processes: a primary, a replica and
three sentinels (``workers.devtools.sentinels``), a worker and a client that reach Redis only
through Sentinel. The primary is killed (SIGKILL) in the middle of a burst of runs.

After the failover, every run is published exactly once without restarting the worker. What
asynchronous replication can lose — writes the primary acknowledged in its last moment and
never passed on — is recovered the one way the fleet offers: the platform submits again, by
run id, every run the new primary does not know (a run it knows is not queued twice).
"""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from fleet_support import TEST_WORKER_SETTINGS, wait_for

from evalfleet.tasks.platform import EvalfleetClient
from evalfleet.tasks.redis_keys import RESULTS_STREAM
from evalfleet.workers.devtools import sandbox_free
from evalfleet.workers.devtools.local_fleet import Starter
from evalfleet.workers.devtools.sentinels import SentinelGroup

#: Bounds generous enough never to flake: the failover itself takes about 4 s here.
SUBMIT_WITHIN_S = 90.0
PUBLISHED_WITHIN_S = 180.0


@pytest.fixture
def group(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    """With ``requirepass`` (the default user), or (``acl-user``) an ACL user of its own,
    the default user off: the same logins as a plain Redis URL's."""
    param = getattr(request, "param", "")
    username = "evalfleet-app" if param == "acl-user" else ""
    # slow-detection: a replica kept cut off while a loaded machine scores runs must still
    # be promotable (not cut off for ten times the detection time: Sentinel's rule).
    down_after_ms = 5000 if param == "slow-detection" else 1000
    started = SentinelGroup(tmp_path, username=username, down_after_ms=down_after_ms).start()
    yield started
    started.stop()


def waited(check: Any, timeout: float, what: str, node: Any) -> Any:
    """:func:`wait_for`, with the worker's log in the message when it fails."""
    try:
        return wait_for(check, timeout, what)
    except AssertionError as err:
        tail = node.log.read_text(errors="replace")[-6000:]
        raise AssertionError(f"{err}; the worker's log ends:\n{tail}") from None


def submit(client: EvalfleetClient, request: dict[str, Any]) -> float:
    """Submit until Redis takes it (through a failover); the seconds it took."""
    started = time.monotonic()
    while True:
        try:
            client.submit(request)
            return time.monotonic() - started
        except Exception:  # no primary yet: the platform tries again
            if time.monotonic() - started > SUBMIT_WITHIN_S:
                raise
            time.sleep(0.2)


def settled(client: EvalfleetClient, requests: dict[str, dict[str, Any]]) -> set[str]:
    """The run ids with a result; a run the primary does not know is submitted again."""
    done = set()
    for run_id, request in requests.items():
        if client.result(run_id) is not None:
            done.add(run_id)
        elif client.status(run_id) is None:  # lost with the old primary
            submit(client, request)
    return done


@pytest.mark.parametrize("group", ["password", "acl-user"], indirect=True)
def test_a_failover_mid_burst_loses_no_run_and_publishes_each_once(
        group: SentinelGroup, docker_client: Any, tmp_path: Path) -> None:
    starter = Starter(group.url, tmp_path, **TEST_WORKER_SETTINGS)
    node = starter("ha", args=["-c", "2"])
    client = EvalfleetClient(group.url)
    try:
        requests = {r["run_id"]: r for r in (sandbox_free.request("ha") for _ in range(40))}
        waits = []
        for index, request in enumerate(requests.values()):
            if index == 20:
                old = group.kill_primary()
            waits.append(submit(client, request))
        waited(lambda: settled(client, requests) == set(requests), PUBLISHED_WITHIN_S,
               "every run published after the failover", node)
        entries = Counter(fields[b"run_id"].decode() for _, fields in
                          client.redis.xrange(RESULTS_STREAM))
        results = [client.result(run_id) for run_id in requests]
    finally:
        client.close()
        starter.stop_all()

    assert group.primary_port() != old
    assert {run_id: entries[run_id] for run_id in requests} == dict.fromkeys(requests, 1)
    assert all(r is not None and r.outcome == "scored" for r in results)
    assert node.process is not None and node.process.returncode in (0, -15), \
        "the worker kept running through the failover (stopped only at the end)"
    assert max(waits) > 0.5  # the burst did meet the failover


@pytest.mark.parametrize("group", ["slow-detection"], indirect=True)
def test_runs_the_old_primary_never_passed_on_are_recovered_by_submitting_again(
        group: SentinelGroup, docker_client: Any, tmp_path: Path) -> None:
    """Asynchronous replication's window, made wide: the replica is paused while runs are
    submitted, scored and published on the primary, which then dies. The new primary has
    never heard of them (no status, no result): the platform submits them again by run id,
    and each is published once, now."""
    starter = Starter(group.url, tmp_path, **TEST_WORKER_SETTINGS)
    node = starter("ha-lost", args=["-c", "2"])
    client = EvalfleetClient(group.url)
    try:
        replica = group.replica_port()
        group.cut_off(replica)
        requests = {r["run_id"]: r for r in (sandbox_free.request("lost") for _ in range(5))}
        for request in requests.values():
            submit(client, request)
        for run_id in requests:
            client.wait(run_id, timeout=60)  # published on the primary: the platform saw it
        old = group.kill_primary()
        group.resume(replica)
        group.wait_failover(old)
        wait_for(lambda: _answers(client), SUBMIT_WITHIN_S, "the new primary answers")
        forgotten = [run_id for run_id in requests if client.status(run_id) is None]
        waited(lambda: settled(client, requests) == set(requests), PUBLISHED_WITHIN_S,
               "every lost run published again", node)
        entries = Counter(fields[b"run_id"].decode() for _, fields in
                          client.redis.xrange(RESULTS_STREAM))
    finally:
        client.close()
        starter.stop_all()

    assert forgotten == list(requests)  # the window did lose them all
    assert {run_id: entries[run_id] for run_id in requests} == dict.fromkeys(requests, 1)


def _answers(client: EvalfleetClient) -> bool:
    try:
        return bool(client.redis.ping())
    except Exception:  # still failing over
        return False
