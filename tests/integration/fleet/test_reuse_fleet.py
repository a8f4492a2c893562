"""Sandbox reuse through the fleet: a worker whose profile reuses its sandboxes scores runs
of different submitters in one container, each as in a fresh one; a worker whose image
cannot reset says so at start and gives every run a fresh sandbox."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from services import TEST_LABELS, image

from evalfleet.sandbox.docker.listing import labelled
from evalfleet.tasks.messages import RunRequest
from evalfleet.workers.devtools.local_fleet import wait_until

ROOT = Path(__file__).parents[3]
PACK: dict[str, Any] = {
    "pack": {"slug": "reuse"},
    "version": {
        "sandbox": {"profile": "reuse"},
        "evaluation_spec": {
            "name": "reuse", "version_number": 1, "judge_mode": "deterministic",
            "validators": [{"key": "clean", "type": "contains", "target": "final_output",
                            "expected_from": "literal:clean"}],
            "scorecard": {"dimensions": ["correctness"]}}},
}
#: Each submitter leaves a file behind and passes only if it finds none.
LOOK_AND_LEAVE = ('[ -z "$(find /workspace /tmp -mindepth 1)" ] && echo clean || echo dirty; '
                  'echo mine > /workspace/left; echo mine > /tmp/.left')


def requests(count: int) -> list[RunRequest]:
    return [RunRequest(run_id=f"reuse-{i}-{uuid.uuid4().hex[:8]}", pack=PACK,
                       submission={"commands": [{"run": LOOK_AND_LEAVE}]}) for i in range(count)]


def health(node: Any) -> str:
    done = subprocess.run([sys.executable, "-m", "evalfleet.workers", "health"], cwd=ROOT,
                          env=node.env, capture_output=True, text=True, check=False)
    return done.stdout + done.stderr


def metric(text: str, name: str, **labels: str) -> float:
    wanted = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
    for line in text.splitlines():
        head, _, value = line.rpartition(" ")
        if head == f"{name}{{{wanted}}}":
            return float(value)
    return 0.0


def pooled(docker_client: Any, worker_id: str) -> int:
    return len(labelled(docker_client, [f"evalfleet.worker={worker_id}", "evalfleet.pool=1"],
                        status="running"))


def test_runs_of_different_submitters_share_a_reset_sandbox(start_worker: Any, client: Any,
                                                            docker_client: Any,
                                                            runtime: str) -> None:
    """Three runs, one container: each finds the sandbox clean and wins; two were reuses,
    each after a verified reset; health says the profile reuses its sandboxes."""
    profiles = json.dumps({"reuse": {"image": image("busybox"), "reuse_runs": 10,
                                     "runtime": runtime}})
    node = start_worker("reuse", queues='["reuse"]', profiles=profiles)
    wait_until(lambda: pooled(docker_client, node.worker_id) == 1, 60, "no pooled sandbox")
    results = []
    for request in requests(3):
        client.submit(request)
        results.append(client.wait(request.run_id, timeout=60))
    text = node.metrics()

    assert [r.scorecard.result for r in results if r.scorecard] == ["win"] * 3
    assert len({r.resources["sandbox_id"] for r in results}) == 1
    assert metric(text, "evalfleet_sandbox_reuses_total", profile="reuse") == 2
    assert metric(text, "evalfleet_sandbox_reset_seconds_count", profile="reuse",
                  verified="true") >= 2
    assert metric(text, "evalfleet_sandbox_reuse_info", profile="reuse", verified="true") == 10
    assert "reuse: profile reuse: up to 10 runs per sandbox (reset verified)" in health(node)


@pytest.fixture
def cannot_reset(docker_client: Any) -> Iterator[str]:
    """An image whose supervisor says it speaks protocol 2 (no reset), removed after."""
    tag = f"evalfleet/busybox:protocol2-{uuid.uuid4().hex[:8]}"
    dockerfile = (f"FROM {image('busybox')}\n"
                  f"LABEL evalfleet.supervisor.protocol=2 "
                  + " ".join(f"{k}={v}" for k, v in TEST_LABELS.items()) + "\n")
    docker_client.images.build(fileobj=io.BytesIO(dockerfile.encode()), tag=tag, rm=True)
    yield tag
    docker_client.images.remove(tag, force=True)


def test_a_worker_whose_resets_cannot_verify_says_so_and_runs_fresh(
        start_worker: Any, client: Any, cannot_reset: str) -> None:
    """The start-up probe finds the image cannot reset: the log, the metric and health say
    so, and every run gets a fresh sandbox (and still wins)."""
    profiles = json.dumps({"reuse": {"image": cannot_reset, "reuse_runs": 10,
                                     "runtime": "runc"}})
    node = start_worker("noreuse", queues='["reuse"]', profiles=profiles)
    results = []
    for request in requests(2):
        client.submit(request)
        results.append(client.wait(request.run_id, timeout=60))
    text = node.metrics()

    assert [r.scorecard.result for r in results if r.scorecard] == ["win"] * 2
    assert len({r.resources["sandbox_id"] for r in results}) == 2
    assert "SANDBOX REUSE OFF: profile reuse: a fresh sandbox per run, NOT the 10 asked " \
           "for" in node.log.read_text()
    assert "speaks protocol 2, which cannot reset" in health(node)
    assert metric(text, "evalfleet_sandbox_reuse_info", profile="reuse", verified="false") == 1
