"""The reaper removes orphans of a killed process and expired sandboxes, spares the live."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import docker.errors
from sandbox_support import IMAGES, TEST_LABELS, profile

from evalfleet.sandbox.docker.factory import DockerFactory
from evalfleet.sandbox.docker.limits import Ownership
from evalfleet.sandbox.docker.reaper import Reaper

ROOT = Path(__file__).resolve().parents[3]

ORPHAN_MAKER = textwrap.dedent("""
    import json, sys, time, docker
    from evalfleet.sandbox.docker.factory import DockerFactory
    from evalfleet.sandbox.docker.limits import Ownership
    from evalfleet.sandbox.profile import Profile
    factory = DockerFactory(docker.from_env(), worker=sys.argv[1],
                            extra_labels=json.loads(sys.argv[2]))
    container, _ = factory.start(Profile(name="p", image=sys.argv[3]),
                              Ownership(sys.argv[1], "orphan-run", time.time() + 3600))
    print(container.id, flush=True)
    time.sleep(600)
""")


def exists(client: Any, container_id: str) -> bool:
    try:
        client.containers.get(container_id)
    except docker.errors.NotFound:
        return False
    return True


def test_reaper_removes_orphans_and_expired_and_spares_the_live(docker_client: Any,
                                                                runtime: str) -> None:
    """A worker killed with SIGKILL leaves a container: reaped. A live worker's container
    is spared until its deadline; past it, it is reaped too."""
    dead_worker, live_worker = f"dead-{os.getpid()}", f"live-{os.getpid()}"
    child = subprocess.Popen([sys.executable, "-c", ORPHAN_MAKER, dead_worker,
                              json.dumps(TEST_LABELS), IMAGES["busybox"]],
                             stdout=subprocess.PIPE, text=True, cwd=ROOT,
                             env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert child.stdout is not None
    orphan = child.stdout.readline().strip()
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    child.stdout.close()
    assert orphan and exists(docker_client, orphan)

    factory = DockerFactory(docker_client, worker=live_worker, extra_labels=TEST_LABELS)
    live, _ = factory.start(profile("busybox", runtime),
                            Ownership(live_worker, "live-run", time.time() + 3600))
    expired, _ = factory.start(profile("busybox", runtime),
                               Ownership(live_worker, "old-run", time.time() - 1))
    try:
        reaper = Reaper(docker_client, is_alive=lambda worker: worker == live_worker,
                        extra_filters=TEST_LABELS)
        report = reaper.reap_once()
        assert orphan in report.orphaned and expired.id in report.expired
        assert not exists(docker_client, orphan) and not exists(docker_client, expired.id)
        assert exists(docker_client, live.id) and report.spared >= 1
    finally:
        live.remove(force=True)
        if exists(docker_client, expired.id):
            expired.remove(force=True)


def test_reaper_spares_when_liveness_is_unknown(docker_client: Any, runtime: str) -> None:
    """A liveness check that fails counts as alive: nothing is removed."""
    factory = DockerFactory(docker_client, worker="unsure", extra_labels=TEST_LABELS)
    container, _ = factory.start(profile("busybox", runtime),
                                 Ownership("unsure", "r", time.time() + 600))

    def broken(worker: str) -> bool:
        raise ConnectionError("redis down")

    try:
        report = Reaper(docker_client, is_alive=broken, extra_filters=TEST_LABELS).reap_once()
        assert container.id not in report.orphaned and exists(docker_client, container.id)
    finally:
        container.remove(force=True)


def test_any_fleets_sandbox_long_past_its_deadline_is_abandoned(docker_client: Any,
                                                                runtime: str) -> None:
    """A sandbox of another fleet (say, one whose Redis was flushed, so its id changed) is
    removed once it is ``abandoned_after_s`` past its deadline, and not a moment before.

    The deadlines lie ahead in real time and the reaper's clock runs ahead of them: any
    other reaper on a shared engine (every worker has one) leaves these two alone; and this
    one, confined to this test run's label, leaves alone what is not under it (another
    test run's sandboxes on the engine, here one labelled for a run that is not this)."""
    fleet = {"evalfleet.fleet": f"gone-{os.getpid()}"}
    factory = DockerFactory(docker_client, worker="gone-worker",
                            extra_labels={**TEST_LABELS, **fleet})
    elsewhere = DockerFactory(docker_client, worker="gone-worker",
                              extra_labels={**fleet, "evalfleet.test": f"other-{os.getpid()}"})
    later = time.time() + 10_000
    box = profile("busybox", runtime)
    abandoned, _ = factory.start(box, Ownership("gone-worker", "a", later - 7200))
    recent, _ = factory.start(box, Ownership("gone-worker", "b", later - 60))
    foreign, _ = elsewhere.start(box, Ownership("gone-worker", "c", later - 7200))
    try:
        reaper = Reaper(docker_client, is_alive=lambda worker: True, clock=lambda: later,
                        extra_filters={**TEST_LABELS, "evalfleet.fleet": "this-fleet"},
                        abandoned_after_s=3600)
        report = reaper.reap_once()
        assert abandoned.id in report.abandoned and recent.id not in report.abandoned
        assert not exists(docker_client, abandoned.id) and exists(docker_client, recent.id)
        assert foreign.id not in report.abandoned and exists(docker_client, foreign.id)
        assert (report.orphaned, report.expired) == ((), ())  # nothing of this fleet
    finally:
        for container in (abandoned, recent, foreign):
            if exists(docker_client, container.id):
                container.remove(force=True)
