"""Workers dying, stopping and overrunning: every run still gets exactly one result."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest
from fleet_support import PrivateFleet, children, log_of, run_request, wait_for
from services import TEST_LABELS, image

from evalfleet.sandbox.docker.factory import DockerFactory
from evalfleet.sandbox.docker.labels import LABEL_FLEET
from evalfleet.sandbox.docker.limits import Ownership
from evalfleet.sandbox.profile import Profile
from evalfleet.tasks.queueing import TASK_NAME, queue_for
from evalfleet.tasks.redis_keys import deliveries_key, heartbeat_key


def deliveries(client: Any, run_id: str) -> int:
    return int(client.redis.get(deliveries_key(run_id)) or 0)


def test_pool_process_sigkilled_mid_run_is_redelivered_once(private_fleet: PrivateFleet) -> None:
    """The pool process running a run is SIGKILLed: the run is redelivered and scored once,
    and the killed run's sandbox does not outlive the reaper."""
    node = private_fleet.start("kill9")
    client = private_fleet.client()
    request = run_request("kill9", "sleep 4; echo hi")
    client.submit(request)
    wait_for(lambda: private_fleet.containers(**{"evalfleet.run_id": request.run_id}), 30,
             "the run's sandbox did not start")
    time.sleep(1.0)
    (child,) = children(node.process.pid)  # type: ignore[union-attr]
    first_box = private_fleet.containers(**{"evalfleet.run_id": request.run_id})[0].id
    os.kill(child, signal.SIGKILL)

    result = client.wait(request.run_id, timeout=90)

    assert (result.outcome, result.attempt) == ("scored", 2)
    assert result.scorecard is not None and result.scorecard.score == 1000
    assert private_fleet.results_streamed({request.run_id}) == {request.run_id: 1}
    wait_for(lambda: not any(c.id == first_box for c in private_fleet.containers()), 30,
             "the killed run's sandbox was not reaped")
    assert "WorkerLostError" in log_of(node) or "exited with" in log_of(node)
    assert node.alive


def test_whole_host_killed_with_runs_reserved(private_fleet: PrivateFleet) -> None:
    """A node holding a running and a prefetched run is SIGKILLed (whole process group):
    another node gets both after the visibility timeout; each is scored exactly once."""
    settings = {"visibility_timeout_s": "6"}
    doomed = private_fleet.start("doomed", ["-c", "2"], **settings)
    client = private_fleet.client()
    requests = [run_request("reserved", "sleep 3; echo hi") for _ in range(3)]
    client.submit_many(requests)
    wait_for(lambda: client.redis.hlen("unacked") >= 2, 30, "the node did not reserve runs")
    doomed.stop(sig=signal.SIGKILL)
    assert client.redis.hlen("unacked") >= 2  # reserved by a dead host: not lost...
    private_fleet.start("survivor", **settings)

    results = [client.wait(r.run_id, timeout=120) for r in requests]

    assert [r.outcome for r in results] == ["scored"] * 3
    assert all(r.worker.startswith("survivor") for r in results[:2] if r.attempt > 1)
    counts = private_fleet.results_streamed({r.run_id for r in requests})
    assert set(counts.values()) == {1}
    wait_for(lambda: not private_fleet.containers(**{"evalfleet.worker": doomed.worker_id}),
             30, "the dead host's sandboxes were not reaped")


@pytest.mark.parametrize("target", ["main", "group"])
def test_sigterm_during_runs_loses_nothing(private_fleet: PrivateFleet, target: str) -> None:
    """SIGTERM while runs execute and wait. To the main process (``docker stop``, Kubernetes,
    tini): in-flight runs finish (warm shutdown), waiting ones stay queued. To the whole
    process group (systemd's KillMode=control-group): the pool processes die, their runs are
    requeued (reject_on_worker_lost) and run again. Either way every run is scored once."""
    node = private_fleet.start("term", ["-c", "2"])
    client = private_fleet.client()
    requests = [run_request("term", "sleep 3; echo hi") for _ in range(5)]
    client.submit_many(requests)
    wait_for(lambda: len(private_fleet.containers(**{"evalfleet.worker": node.worker_id})) >= 2,
             30, "runs did not start")
    assert node.process is not None
    if target == "main":
        node.process.send_signal(signal.SIGTERM)
    else:
        os.killpg(node.process.pid, signal.SIGTERM)
    node.process.wait(60)
    finished_before = [client.result(r.run_id) for r in requests]
    private_fleet.start("after")

    results = [client.wait(r.run_id, timeout=120) for r in requests]

    done_by_first = sum(1 for r in finished_before if r is not None)
    assert done_by_first >= (2 if target == "main" else 0)
    assert done_by_first < 5  # runs that had not started stayed queued for the next node
    assert [r.outcome for r in results] == ["scored"] * 5
    assert set(private_fleet.results_streamed({r.run_id for r in requests}).values()) == {1}
    wait_for(lambda: not private_fleet.containers(**{"evalfleet.worker": node.worker_id}), 30,
             "the stopped node's sandboxes were not removed")


def test_a_stopped_node_leaves_none_of_its_sandboxes(private_fleet: PrivateFleet) -> None:
    """A sandbox of a node that nothing else would remove before its deadline (as one whose
    removal the engine failed during the shutdown: Docker gives up a forced kill after
    about 12 s) is removed by the node's last sweep at its stop; another node's is not."""
    node = private_fleet.start("last-sweep")
    other = f"other-{node.worker_id}"  # alive: it beats (an hour's key) and never stops
    private_fleet.client().redis.set(heartbeat_key(other), "1", ex=3600)
    planted = {worker: plant(private_fleet, worker) for worker in (node.worker_id, other)}
    time.sleep(2.5)  # reaper passes (1 s apart in tests) spare a live node's sandbox
    assert all(exists(private_fleet, box) for box in planted.values())

    node.stop()

    assert not exists(private_fleet, planted[node.worker_id])
    assert exists(private_fleet, planted[other])
    private_fleet.docker.containers.get(planted[other]).remove(force=True)


def plant(fleet: PrivateFleet, worker: str) -> str:
    """A started sandbox of ``worker`` in ``fleet``, its deadline an hour away (its id)."""
    factory = DockerFactory(fleet.docker, worker=worker,
                            extra_labels={**TEST_LABELS, LABEL_FLEET: fleet.label})
    container, channel = factory.start(Profile(name="planted", image=image("busybox")),
                                       Ownership(worker, "planted", time.time() + 3600))
    if channel is not None:
        channel.close()
    return str(container.id)


def exists(fleet: PrivateFleet, container_id: str) -> bool:
    return any(c.id == container_id for c in fleet.containers())


def test_poison_message_stops_at_the_cap_and_does_not_block(private_fleet: PrivateFleet,
                                                           tmp_path: Path) -> None:
    """A request whose delivery kills the pool process every time: after the delivery cap
    it is published as failed, and the run queued behind it is scored."""
    node = private_fleet.start("poison", delivery_cap="3")
    client = private_fleet.client()
    poison = run_request("poison", "sleep 1; echo hi")
    # The crash is injected by killing the pool process while it executes the poison run.
    client.submit(poison)
    behind = run_request("behind")
    client.submit(behind)
    killed = 0
    deadline = time.monotonic() + 90
    while client.result(poison.run_id) is None and time.monotonic() < deadline:
        if private_fleet.containers(**{"evalfleet.run_id": poison.run_id}) and \
                deliveries(client, poison.run_id) > killed:
            for child in children(node.process.pid):  # type: ignore[union-attr]
                os.kill(child, signal.SIGKILL)
            killed += 1
        time.sleep(0.05)

    result = client.wait(poison.run_id, timeout=5)
    later = client.wait(behind.run_id, timeout=60)

    assert result.outcome == "internal_error" and result.scorecard is None
    assert "delivery cap" in result.reason or "gave up after" in result.reason
    assert later.outcome == "scored"
    assert set(private_fleet.results_streamed({poison.run_id, behind.run_id}).values()) == {1}


def test_run_outliving_the_visibility_timeout(private_fleet: PrivateFleet) -> None:
    """A run longer than the visibility timeout is redelivered to a second node while the
    first still runs it: both execute (at-least-once) and exactly one result is published."""
    settings = {"visibility_timeout_s": "3"}
    first = private_fleet.start("slow-a", **settings)
    client = private_fleet.client()
    request = run_request("overrun", "sleep 12; echo hi")
    private_fleet.sender().send_task(TASK_NAME, args=[request.model_dump_json()],
                         queue=queue_for("default"))
    wait_for(lambda: private_fleet.containers(**{"evalfleet.run_id": request.run_id}), 30,
             "the run did not start")
    second = private_fleet.start("slow-b", **settings)

    result = client.wait(request.run_id, timeout=90)
    time.sleep(14)  # let the other copy finish too

    assert result.outcome == "scored"
    assert deliveries(client, request.run_id) == 2  # it did run twice, in parallel
    assert private_fleet.results_streamed({request.run_id}) == {request.run_id: 1}
    assert {first.alive, second.alive} == {True}
