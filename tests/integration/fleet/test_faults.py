"""Who is at fault decides the path: infrastructure failures retry, never score a candidate."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from evalfleet.sandbox.docker.listing import labelled
from evalfleet.tasks.messages import RunRequest

ROOT = Path(__file__).parents[3]
PACK: dict[str, Any] = {
    "pack": {"slug": "echo"},
    "version": {
        "sandbox": {"profile": "broken"},
        "evaluation_spec": {
            "name": "echo", "version_number": 1, "judge_mode": "deterministic",
            "validators": [{"key": "hi", "type": "contains", "target": "final_output",
                            "expected_from": "literal:hi"}],
            "scorecard": {"dimensions": ["correctness"]}}},
}
BROKEN_PROFILES = json.dumps({"broken": {"image": "evalfleet/python:latest"}})


def test_a_worker_whose_engine_never_answers_exits_at_start(start_worker: Any) -> None:
    """A worker must know which runtime isolates its sandboxes (gVisor or runc) before it
    takes a run: with no engine it says so and exits (its orchestrator restarts it), so
    no run is taken and failed meanwhile. An engine lost later is retried, then
    ``infra_error`` (tests/reliability/test_docker_outage.py)."""
    with pytest.raises(RuntimeError, match="the Docker engine did not answer within 1 s"):
        start_worker("nodocker", queues='["broken"]', profiles=BROKEN_PROFILES,
                     docker_url="unix:///nonexistent/docker.sock", engine_wait_s="1")


def test_a_profile_asking_for_a_runtime_the_engine_lacks_stops_the_worker(
        start_worker: Any) -> None:
    """A clear error at start, naming the profile and what the engine offers."""
    profiles = json.dumps({"broken": {"image": "evalfleet/python:latest", "runtime": "kata"}})
    with pytest.raises(RuntimeError, match=r"profile 'broken': runtime 'kata' is not one"):
        start_worker("nokata", queues='["broken"]', profiles=profiles)


def test_missing_image_is_an_infra_error_without_retry(start_worker: Any, client: Any) -> None:
    """A profile whose image does not exist is a configuration error: no retries."""
    profiles = json.dumps({"broken": {"image": "evalfleet/does-not-exist:none"}})
    start_worker("noimage", queues='["broken"]', profiles=profiles)
    request = RunRequest(run_id="noimage-" + str(time.time_ns()), pack=PACK,
                         submission={"commands": [{"run": "echo hi"}]})
    client.submit(request)

    result = client.wait(request.run_id, timeout=60)

    assert (result.outcome, result.attempt) == ("infra_error", 1)
    assert "sandbox configuration" in result.reason


def health(node: Any, *flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "evalfleet.workers", "health", *flags], cwd=ROOT,
                          env=node.env, capture_output=True, text=True, check=False)


def test_health_fails_when_the_worker_is_gone(start_worker: Any) -> None:
    """`evalfleet health` exits 0 for a live worker and 1 once it is killed."""
    node = start_worker("health")

    live, ready = health(node), health(node, "--ready")
    node.stop(sig=9)
    time.sleep(3.5)  # the heartbeat TTL of the test workers is 3 s
    gone = health(node)

    assert (live.returncode, ready.returncode) == (0, 0), live.stderr + ready.stderr
    assert "broker reachable" in ready.stdout
    assert gone.returncode == 1
    assert "heartbeat" in gone.stderr


def test_health_says_which_runtime_isolates_each_profile(start_worker: Any) -> None:
    """The worker's notes under its beat: gVisor for an auto profile on this engine, runc
    said loudly for one pinned elsewhere or without gVisor; and the metric says the same."""
    profiles = json.dumps({"default": {}, "plain": {"runtime": "runc"},
                           "web": {"allow_network": True}})
    node = start_worker("isolation", queues='["default", "plain", "web"]', profiles=profiles)

    said = health(node)

    assert said.returncode == 0, said.stderr
    assert "isolation: profile default: runtime runsc (gVisor)" in said.stdout
    assert "isolation: profile plain: runtime runc (the host's kernel)\n" in said.stdout
    # runsc is registered --network=none here: a network profile on auto falls back, loudly
    assert "isolation: profile web: runtime runc (the host's kernel); NOT gVisor" in said.stdout
    assert "SANDBOX ISOLATION DEGRADED: profile web" in node.log.read_text()
    metrics = node.metrics()
    assert ('evalfleet_sandbox_isolation_info{fallback="false",gvisor="true",profile="default",'
            'runtime="runsc"} 1.0') in metrics
    assert ('evalfleet_sandbox_isolation_info{fallback="true",gvisor="false",profile="web",'
            'runtime="runc"} 1.0') in metrics


def test_readiness_needs_the_broker(start_worker: Any, redis_server: Any) -> None:
    """Readiness fails when the broker is unreachable while liveness still passes."""
    node = start_worker("ready")
    env = {**node.env, "EVALFLEET_REDIS_URL": "redis://127.0.0.1:1/0"}

    live = subprocess.run([sys.executable, "-m", "evalfleet.workers", "health"], cwd=ROOT, env=env,
                          capture_output=True, text=True, check=False)
    ready = subprocess.run([sys.executable, "-m", "evalfleet.workers", "health", "--ready"],
                           cwd=ROOT, env=env, capture_output=True, text=True, check=False)

    assert (live.returncode, ready.returncode) == (0, 1)
    assert "broker unreachable" in ready.stderr


def test_readiness_needs_the_engine(start_worker: Any) -> None:
    """Readiness fails while the Docker engine does not answer (an engine sidecar that is
    restarting), liveness still passes; with the engine back, the worker is ready again."""
    node = start_worker("engine-ready")
    gone = {**node.env, "EVALFLEET_DOCKER_URL": "unix:///nonexistent/docker.sock"}

    live = subprocess.run([sys.executable, "-m", "evalfleet.workers", "health"], cwd=ROOT, env=gone,
                          capture_output=True, text=True, check=False)
    unready = subprocess.run([sys.executable, "-m", "evalfleet.workers", "health", "--ready"],
                             cwd=ROOT, env=gone, capture_output=True, text=True, check=False)
    ready = health(node, "--ready")

    assert (live.returncode, unready.returncode, ready.returncode) == (0, 1, 0)
    assert "Docker engine unreachable" in unready.stderr
    assert "engine reachable" in ready.stdout


def test_a_warm_pool_serves_runs_and_is_removed_at_shutdown(start_worker: Any, client: Any,
                                                            docker_client: Any) -> None:
    """With a pool, runs take warm sandboxes (hits counted); stopping leaves no container."""
    profiles = json.dumps({"warm": {"pool_size": 2}})
    node = start_worker("warm", queues='["warm"]', profiles=profiles)
    pack = json.loads(json.dumps(PACK))
    pack["version"]["sandbox"] = {"profile": "warm"}
    requests = [RunRequest(run_id=f"warm-{i}-{time.time_ns()}", pack=pack,
                           submission={"commands": [{"run": "echo hi"}]}) for i in range(3)]
    results = []
    for request in requests:  # each once the pool is full again (a run takes ~20 ms)
        _wait(lambda: IDLE_TWO in node.metrics())
        client.submit(request)
        results.append(client.wait(request.run_id, timeout=60))
    text = node.metrics()
    node.stop()

    assert [r.scorecard.score for r in results if r.scorecard] == [1000, 1000, 1000]
    assert 'evalfleet_sandbox_pool_takes_total{outcome="hit",profile="warm"} 3.0' in text
    assert _containers(docker_client, node.worker_id) == 0


#: The worker's own word that both warm sandboxes are ready (started, supervisor up).
IDLE_TWO = 'evalfleet_sandbox_pool_idle{profile="warm"} 2.0'


def _containers(docker_client: Any, worker_id: str) -> int:
    return len(labelled(docker_client, [f"evalfleet.worker={worker_id}"]))


def _wait(check: Any, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.1)


def test_the_reaper_removes_its_own_fleets_orphans_only(start_worker: Any, redis_server: Any,
                                                        docker_client: Any) -> None:
    """An orphan of this fleet (dead worker) is reaped; another fleet's container is not."""
    import redis

    from evalfleet.tasks.redis_keys import FLEET_KEY

    start_worker("reaper", reaper_interval_s="0.5")
    ours = redis.Redis.from_url(redis_server.url).get(FLEET_KEY).decode()
    made = [docker_client.containers.run(
        "evalfleet/busybox:latest", ["sleep", "300"], detach=True, network_mode="none",
        labels={"evalfleet.worker": "dead-worker", "evalfleet.fleet": fleet,
                "evalfleet.deadline": str(time.time() + 3600), "evalfleet.test": "1"})
        for fleet in (ours, "some-other-fleet")]
    try:
        _wait(lambda: _exists(docker_client, made[0].id) is False)
        time.sleep(1.5)  # a few more passes: the other fleet's container must stay
        assert _exists(docker_client, made[1].id)
    finally:
        for container in made:
            with contextlib.suppress(Exception):
                container.remove(force=True)


def _exists(docker_client: Any, container_id: str) -> bool:
    import docker

    try:
        docker_client.containers.get(container_id)
    except docker.errors.NotFound:
        return False
    return True
