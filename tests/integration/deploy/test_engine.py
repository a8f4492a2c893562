"""The sandbox engine image (deploy/engine) as scripts/build-worker-image.sh builds it.

One engine container per module, run with the privileges docker-compose.yml gives it, its
socket in a host directory, one preloaded archive (the busybox sandbox image). Checked: it
registers gVisor's runsc as the issue asks, a hardened evalfleet sandbox runs under runsc and
under runc inside it, its sandboxes' cgroups nest inside its own, the socket belongs to the
worker's group, a killed engine comes back by itself and removes the containers of its former
life, and an engine that cannot get an image it must have never reports ready.
"""

from __future__ import annotations

import os
import stat
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from composestack import ENGINE_IMAGE
from services import missing_service

from evalfleet.sandbox.docker.limits import Ownership, create_kwargs
from evalfleet.sandbox.profile import Profile
from evalfleet.workers.devtools.local_engine import LocalEngine, wait_for_restart

LABELS = {"evalfleet.test": "deploy-engine"}
SANDBOX_IMAGE = "evalfleet/busybox:latest"
WORKER_GID = 10001


@pytest.fixture(scope="module")
def preload(docker_client: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A preload directory holding the busybox sandbox image (``docker save``)."""
    for image in (ENGINE_IMAGE, SANDBOX_IMAGE):
        try:
            docker_client.images.get(image)
        except Exception as error:  # not built: scripts/setup.sh
            missing_service(f"image {image}", error)
    directory = tmp_path_factory.mktemp("preload")
    subprocess.run(["docker", "save", "-o", str(directory / "busybox.tar"), SANDBOX_IMAGE],
                   check=True, timeout=60)
    return directory


@pytest.fixture(scope="module")
def engine(docker_client: Any, preload: Path) -> Iterator[LocalEngine]:
    """A running engine with the busybox image loaded."""
    found = LocalEngine(docker_client, LABELS, preload=preload, image=ENGINE_IMAGE)
    try:
        yield found.start()
    finally:
        found.remove()


def sandbox(inner: Any, runtime: str) -> Any:
    """A started evalfleet sandbox (the driver's hardened arguments) under ``runtime``."""
    profile = Profile(name="engine-test", image=SANDBOX_IMAGE, runtime=runtime)
    owner = Ownership("engine-test", f"engine-{runtime}", time.time() + 120)
    container = inner.containers.create(**create_kwargs(profile, owner, dict(LABELS)))
    container.start()
    return container


def test_runsc_is_registered_next_to_runc(engine: LocalEngine) -> None:
    runtimes = engine.inner().info()["Runtimes"]

    assert runtimes["runsc"] == {"path": "/usr/bin/runsc",
                                 "runtimeArgs": ["--network=none", "--oci-seccomp"]}
    assert "runc" in runtimes
    assert engine.inner().info()["DefaultRuntime"] == "runc"


@pytest.mark.parametrize("runtime", ["runsc", "runc"])
def test_a_hardened_sandbox_runs_inside_under(engine: LocalEngine, runtime: str) -> None:
    """Under runsc the sandbox sees gVisor's kernel, under runc the host's."""
    container = sandbox(engine.inner(), runtime)
    try:
        code, out = container.exec_run(["uname", "-r"], user="1000:1000")
    finally:
        container.remove(force=True)

    assert code == 0
    host = os.uname().release
    assert (out.decode().strip() == host) is (runtime == "runc"), out


def test_sandboxes_nest_in_the_engines_cgroup(engine: LocalEngine) -> None:
    """A sandbox's cgroup lies inside the engine container's: the pod's limits bound it, and
    removing the engine removes its cgroups."""
    container = sandbox(engine.inner(), "runc")
    try:
        code, out = container.exec_run(["cat", "/proc/self/cgroup"])
    finally:
        container.remove(force=True)

    assert code == 0
    memory = next(line for line in out.decode().splitlines() if ":memory:" in line
                  or line.startswith("0::"))
    assert engine.container.id in memory, memory


def test_the_socket_belongs_to_the_workers_group(engine: LocalEngine) -> None:
    socket = (engine.socket_dir / "docker.sock").stat()

    assert stat.S_ISSOCK(socket.st_mode)
    assert (socket.st_uid, socket.st_gid, stat.S_IMODE(socket.st_mode)) == (
        0, WORKER_GID, 0o660)


def test_a_killed_engine_restarts_and_removes_its_former_containers(
        engine: LocalEngine) -> None:
    """SIGKILL of the engine container: Docker restarts it (its restart policy, as kubelet
    restarts a sidecar), its sandboxes died with it and are removed at start, and the
    preloaded image is still there (the data volume outlives the process) and not reloaded."""
    left = sandbox(engine.inner(), "runc")
    before = engine.restarts()

    engine.crash()
    took = wait_for_restart(engine, before)

    inner = engine.inner()
    assert inner.containers.list(all=True, filters={"id": left.id}) == []
    assert inner.images.get(SANDBOX_IMAGE)
    log = engine.container.logs().decode()
    assert log.count("loaded /preload/busybox.tar") == 1, log
    assert took < 30


def test_an_engine_without_an_image_it_needs_never_becomes_ready(
        docker_client: Any, preload: Path) -> None:
    """An image named by the worker's profiles that can be neither loaded nor pulled (no
    registry here) keeps the engine unready, loudly: a worker would only fail its runs."""
    found = LocalEngine(docker_client, LABELS, preload=preload, image=ENGINE_IMAGE, environment={
        "EVALFLEET_PROFILES__BROKEN__IMAGE": "evalfleet/no-such-image:engine-test"})
    try:
        with pytest.raises(TimeoutError) as raised:
            found.start(timeout=15)
    finally:
        found.remove()

    assert "cannot pull evalfleet/no-such-image:engine-test" in str(raised.value)
