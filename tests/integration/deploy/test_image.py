"""The worker image as built by scripts/build-worker-image.sh (scripts/setup.sh runs it)."""

from __future__ import annotations

import subprocess
import time
from typing import Any

from composestack import LOCAL_IMAGES, ROOT
from services import missing_service

SCRIPT = ROOT / "scripts" / "build-worker-image.sh"


def worker_image(docker_client: Any) -> Any:
    try:
        return docker_client.images.get(LOCAL_IMAGES["WORKER_IMAGE"])
    except Exception as error:  # not built: scripts/build-worker-image.sh
        missing_service("the worker image", error)


def test_rebuilding_unchanged_inputs_is_a_fast_no_op(docker_client: Any) -> None:
    before = worker_image(docker_client).id
    subprocess.run(["bash", str(SCRIPT), "--check"], check=True, timeout=60)
    started = time.monotonic()
    subprocess.run(["bash", str(SCRIPT)], check=True, timeout=120, capture_output=True)
    assert time.monotonic() - started < 10
    assert worker_image(docker_client).id == before


def test_image_runs_unprivileged_with_health_check_and_warm_stop(docker_client: Any) -> None:
    config = worker_image(docker_client).attrs["Config"]
    assert config["User"] == "evalfleet"
    assert config["Healthcheck"]["Test"] == ["CMD", "evalfleet", "health"]
    assert config["StopSignal"] == "SIGTERM"
    assert config["Entrypoint"] == ["evalfleet"] and config["Cmd"] == ["worker"]


def test_health_fails_without_a_heartbeat(docker_client: Any) -> None:
    """Liveness is the heartbeat file: a container whose worker never beat is not live."""
    output = docker_client.containers.run(
        LOCAL_IMAGES["WORKER_IMAGE"], ["health"], network_mode="none", remove=True,
        stdout=True, stderr=True, entrypoint=["sh", "-c", 'evalfleet "$@"; echo "exit=$?"', "-"])
    assert b"no heartbeat file" in output and output.rstrip().endswith(b"exit=1")
