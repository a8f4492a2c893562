"""The Kubernetes pod of deploy/k8s/base/worker.yaml, as docker-compose.yml's `sidecar` profile.

A pod is sidecar-engine (its own Docker engine, privileged, data on an anonymous volume) and
sidecar-worker (no host socket: the engine's socket in a shared volume). One stack per module,
about two minutes: `docker-compose --profile sidecar up` with the locally built images (the
engine loads the sandbox images saved in build/engine-images/), then, in this order: every
example pack's passing and failing submission is scored through the pod's engine, under gVisor
inside it (and one run on runc); the pod's sandboxes are in its engine and nowhere on the
host's; the engine is killed mid-run and the run is scored on a later delivery, the dead
sandbox removed; the pod is stopped mid-run and its run
finishes before its engine stops; the pod is deleted mid-run, leaving no engine, volume or
sandbox process behind, and its run is scored by the replacement pod. Then `docker-compose
down -v` and an assertion that nothing of the project is left on the host's engine.
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from composestack import LOCAL_IMAGES, PACKS, ROOT, Stack, pack, run_id
from services import missing_service

from evalfleet.tasks.checking.submissions import load_submission
from evalfleet.tasks.messages import RunRequest, RunResult
from evalfleet.workers.devtools.demo import demo_runs
from evalfleet.workers.devtools.local_fleet import wait_until

POD = ("sidecar-engine", "sidecar-worker")
SERVICES = ["redis", "stub-judge", *POD]
PRELOAD = ROOT / "build" / "engine-images" / "python.tar"


@dataclass
class Pod:
    """The sidecar stack and what the test saw of it (every engine data volume it made)."""

    stack: Stack
    docker: Any
    data_volumes: set[str] = field(default_factory=set)
    worker_hosts: set[str] = field(default_factory=set)

    def up(self) -> None:
        """Start (or re-create) the pod; compose waits for the engine to be healthy."""
        self.stack.compose("up", "-d", *SERVICES, timeout=300)
        self.data_volumes.add(self.data_volume())
        self.worker_hosts |= self.stack.worker_hosts(self.docker, "sidecar-worker")

    def container(self, service: str) -> dict[str, Any]:
        (found,) = self.stack.containers(self.docker, service)
        inspected: dict[str, Any] = self.docker.api.inspect_container(found["Id"])
        return inspected

    def data_volume(self) -> str:
        (mount,) = [m for m in self.container("sidecar-engine")["Mounts"]
                    if m["Destination"] == "/var/lib/docker"]
        return str(mount["Name"])

    def inner(self) -> Any:
        """A docker SDK client for the pod's engine (its socket, through the shared volume)."""
        import docker

        volume = self.docker.volumes.get(f"{self.stack.project}_engine-socket")
        socket = Path(volume.attrs["Mountpoint"]) / "docker.sock"
        return docker.DockerClient(base_url=f"unix://{socket}", version="1.41", timeout=30)

    def sandbox_of(self, rid: str, timeout: float = 60) -> str:
        """The id of run ``rid``'s sandbox in the pod's engine, once it exists."""
        found: list[str] = []

        def started() -> bool:
            with contextlib.suppress(Exception):  # the engine may be restarting
                found[:] = [c["Id"] for c in self.inner().api.containers(
                    filters={"label": f"evalfleet.run_id={rid}"})]
            return bool(found)

        wait_until(started, timeout, f"no sandbox for {rid} in the pod's engine")
        return found[0]


@pytest.fixture(scope="module")
def pod(docker_client: Any) -> Iterator[Pod]:
    """The sidecar pod, up; torn down at the end and checked for leftovers on the host."""
    if shutil.which("docker-compose") is None:
        missing_service("docker-compose", FileNotFoundError("not on PATH (scripts/setup.sh)"))
    for image in LOCAL_IMAGES.values():
        try:
            docker_client.images.get(image)
        except Exception as error:  # not built: scripts/build-worker-image.sh
            missing_service(f"image {image}", error)
    if not PRELOAD.is_file():
        missing_service("the saved sandbox image", FileNotFoundError(
            f"{PRELOAD} (scripts/build-worker-image.sh writes it)"))
    current = subprocess.run(["bash", str(ROOT / "scripts" / "build-worker-image.sh"), "--check"],
                             capture_output=True, text=True, check=False)
    assert current.returncode == 0, current.stderr
    found = Pod(Stack(profiles=("sidecar",)), docker_client)
    try:
        found.up()
        yield found
    finally:
        try:
            found.stack.down()
        except subprocess.CalledProcessError as error:
            pytest.fail(f"docker-compose down failed: {error.stderr}")
    left = found.stack.leftovers(docker_client, found.worker_hosts)
    volumes = {v.name for v in docker_client.volumes.list()}
    assert left + sorted(found.data_volumes & volumes) == []


@pytest.fixture(scope="module")
def client(pod: Pod) -> Iterator[Any]:
    from evalfleet.tasks.platform import EvalfleetClient

    found = EvalfleetClient(pod.stack.redis_url)
    wait_until(lambda: _pings(found), 60, "Redis of the stack did not answer")
    yield found
    found.close()


def _pings(client: Any) -> bool:
    try:
        return bool(client.redis.ping())
    except Exception:  # not up yet
        return False


def sleeping_request(label: str, seconds: int) -> RunRequest:
    """fizzbuzz-coding's passing submission, whose command first sleeps ``seconds``."""
    passing = load_submission(PACKS / "fizzbuzz-coding" / "submissions" / "pass")
    return RunRequest(run_id=run_id(label), pack=pack("fizzbuzz-coding"),
                      submission={**passing.model_dump(), "commands": [
                          {"run": f"sleep {seconds}", "timeout_ms": 60_000}]})


def test_every_example_pack_is_scored_through_the_pods_engine(pod: Pod, client: Any) -> None:
    """Each example pack's passing submission wins and its failing one loses (the judged
    pack's judges are the stub judge), every run executed by the pod's worker under gVisor
    (the default profile's "auto" runtime: the pod's engine registers runsc); a run on the
    profile pinned to runc reports what it used, read inside its sandbox."""
    runs = demo_runs(PACKS)
    pinned = RunRequest(run_id=run_id("runc"), pack=pack("fizzbuzz-coding", profile="warm"),
                        submission=load_submission(PACKS / "fizzbuzz-coding" / "submissions"
                                                   / "pass"))
    client.submit_many([*(r.request for r in runs), pinned])
    results = {r.request.run_id: client.wait(r.request.run_id, timeout=180) for r in runs}
    on_runc = client.wait(pinned.run_id, timeout=180)
    (host,) = pod.worker_hosts

    assert {(r.pack, r.submission): (results[r.request.run_id].outcome,
                                     _verdict(results[r.request.run_id])) for r in runs} == {
        (r.pack, r.submission): ("scored", "win" if r.submission == "pass" else "loss")
        for r in runs}
    assert {r.worker.split("-")[0] for r in [*results.values(), on_runc]} == {host}
    sandboxed = [r for r in results.values() if r.resources["sandbox_id"]]
    assert sandboxed and {r.resources["runtime"] for r in sandboxed} == {"runsc"}
    assert all(r.resources["runtime"] in ("", None)  # nothing to execute: no sandbox
               for r in results.values() if not r.resources["sandbox_id"])
    assert (on_runc.resources["runtime"], _verdict(on_runc)) == ("runc", "win")
    usage = on_runc.resources["usage"]
    assert usage["memory_peak_bytes"] > 0 and usage["cpu_seconds"] > 0


def _verdict(result: RunResult) -> str | None:
    return result.scorecard.result if result.scorecard else result.reason


def test_the_worker_holds_no_host_socket_and_its_sandboxes_live_in_its_engine(
        pod: Pod) -> None:
    """The worker mounts the engine's socket volume (and the packs directory, read-only, and
    the volume of the fleet's signing key) only; its warm sandbox is in the pod's engine,
    and the host's engine has no container of that worker."""
    worker = pod.container("sidecar-worker")
    mounts = {m["Destination"]: (m.get("Name"), m["RW"]) for m in worker["Mounts"]}
    inner = pod.inner()
    owner = {"label": "evalfleet.profile=warm"}
    wait_until(lambda: bool(inner.api.containers(filters=owner)), 60, "no warm sandbox")
    workers = {c["Labels"]["evalfleet.worker"] for c in inner.api.containers(filters=owner)}

    assert mounts == {"/engine": (f"{pod.stack.project}_engine-socket", False),
                      "/srv/evalfleet/packs": (None, False),
                      "/var/lib/evalfleet/keys": (f"{pod.stack.project}_evalfleet-keys", True)}
    assert worker["HostConfig"]["GroupAdd"] in (None, [])
    assert [w.split("-")[0] for w in workers] == [worker["Config"]["Hostname"]]
    assert [c["Names"] for w in workers for c in pod.docker.api.containers(
        all=True, filters={"label": f"evalfleet.worker={w}"})] == []


def test_an_engine_killed_mid_run_is_retried_and_its_sandbox_reaped(pod: Pod,
                                                                     client: Any) -> None:
    """SIGKILL of the engine container while a run executes (as the kernel's OOM killer
    would): Docker restarts it, the run is scored on a later delivery — never as the
    candidate's failure — and the killed run's sandbox is gone from the restarted engine."""
    request = sleeping_request("engine-killed", 5)
    client.submit(request)
    dead = pod.sandbox_of(request.run_id)
    engine = pod.container("sidecar-engine")

    _kill(engine["State"]["Pid"])
    result = client.wait(request.run_id, timeout=120)

    assert (result.outcome, _verdict(result)) == ("scored", "win"), result.reason
    assert result.attempt >= 2
    assert pod.container("sidecar-engine")["RestartCount"] == engine["RestartCount"] + 1
    # The dead sandbox goes at the engine's start, or by the worker's own removal of its run's
    # sandbox when that reaches the engine first; either way before the next reaper pass.
    wait_until(lambda: not _stopped(pod, dead), 30, f"dead sandbox left: {_stopped(pod, dead)}")


def _stopped(pod: Pod, also: str) -> list[str]:
    """Containers in the pod's engine that are not running, and ``also`` if it exists."""
    found = pod.inner().api.containers(all=True)
    return [f"{c['Id'][:12]} {c['State']}" for c in found
            if c["State"] != "running" or c["Id"] == also]


def _kill(pid: int) -> None:
    subprocess.run(["kill", "-KILL", str(pid)], check=True)


def test_stopping_the_pod_lets_its_run_finish_before_its_engine_stops(pod: Pod,
                                                                      client: Any) -> None:
    """`docker-compose stop` of the pod mid-run (SIGTERM, as Kubernetes deletes a pod): the
    worker finishes and publishes its run, then the engine stops, both cleanly — the order
    native sidecars give a pod. The pod is started again afterwards."""
    request = sleeping_request("pod-stopped", 5)
    client.submit(request)
    pod.sandbox_of(request.run_id)

    pod.stack.compose("stop", *POD, timeout=120)
    result = client.wait(request.run_id, timeout=10)
    worker, engine = pod.container("sidecar-worker"), pod.container("sidecar-engine")
    pod.up()

    assert (result.outcome, _verdict(result), result.attempt) == ("scored", "win", 1)
    assert (worker["State"]["ExitCode"], engine["State"]["ExitCode"]) == (0, 0)
    assert worker["State"]["FinishedAt"] < engine["State"]["FinishedAt"]


def test_deleting_the_pod_removes_its_engine_and_every_sandbox(pod: Pod, client: Any) -> None:
    """The pod deleted mid-run, its grace period (3 s) shorter than the run: no process of
    any of its sandboxes survives on the host, its engine's container and data volume are
    gone; the run comes back (visibility timeout, 30 s here) and the replacement pod scores
    it. Runs last: the pod it leaves is the replacement."""
    request = sleeping_request("pod-deleted", 8)
    client.submit(request)
    pod.sandbox_of(request.run_id)
    sandboxes = [c["Id"] for c in pod.inner().api.containers()]
    pids = host_pids(sandboxes)
    engine, volume = pod.container("sidecar-engine")["Id"], pod.data_volume()

    pod.stack.compose("stop", "-t", "3", *POD, timeout=120)
    pod.stack.compose("rm", "-f", "-v", *POD)
    gone = (host_pids(sandboxes), [v.name for v in pod.docker.volumes.list()
                                   if v.name == volume],
            pod.docker.api.containers(all=True, filters={"id": engine}))
    pod.up()
    result = client.wait(request.run_id, timeout=120)

    assert len(sandboxes) >= 2 and pids  # the run's sandbox and the warm one, alive before
    assert gone == ([], [], [])
    assert (result.outcome, _verdict(result), result.attempt) == ("scored", "win", 2)


def host_pids(container_ids: list[str]) -> list[int]:
    """Processes on this host (any pid namespace) whose cgroup names one of the containers."""
    found = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            cgroups = (proc / "cgroup").read_text()
        except OSError:  # exited meanwhile
            continue
        if any(cid in cgroups for cid in container_ids):
            found.append(int(proc.name))
    return found

