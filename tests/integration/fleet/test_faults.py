"""Who is at fault decides the path: infrastructure failures retry, never score a candidate."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from tasks.messages import RunRequest

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


def test_engine_unreachable_is_retried_then_infra_error(start_worker: Any, client: Any) -> None:
    """With no Docker engine, a run is retried up to the delivery cap and ends infra_error."""
    start_worker("nodocker", queues='["broken"]', profiles=BROKEN_PROFILES,
                 docker_url="unix:///nonexistent/docker.sock", delivery_cap="3")
    request = RunRequest(run_id="nodocker-1-" + str(time.time_ns()), pack=PACK,
                         submission={"commands": [{"run": "echo hi"}]})
    client.submit(request)

    result = client.wait(request.run_id, timeout=60)

    assert result.outcome == "infra_error"
    assert result.scorecard is None
    assert result.attempt == 3
    assert "gave up after 3 deliveries" in result.reason
    assert "SandboxUnavailable" in result.reason


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
    return subprocess.run([sys.executable, "-m", "workers", "health", *flags], cwd=ROOT,
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


def test_readiness_needs_the_broker(start_worker: Any, redis_server: Any) -> None:
    """Readiness fails when the broker is unreachable while liveness still passes."""
    node = start_worker("ready")
    env = {**node.env, "EVALFLEET_REDIS_URL": "redis://127.0.0.1:1/0"}

    live = subprocess.run([sys.executable, "-m", "workers", "health"], cwd=ROOT, env=env,
                          capture_output=True, text=True, check=False)
    ready = subprocess.run([sys.executable, "-m", "workers", "health", "--ready"], cwd=ROOT,
                           env=env, capture_output=True, text=True, check=False)

    assert (live.returncode, ready.returncode) == (0, 1)
    assert "broker unreachable" in ready.stderr
