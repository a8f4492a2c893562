"""On the real engine, our seccomp profile refuses ``prlimit`` on another process and every
``io_uring`` ring (EPERM) while a process still reads and sets its own limits; Docker's
(20.10) default profile allows both.
Both under runc and under gVisor, which applies a container's seccomp profile only when it
is registered with ``--oci-seccomp`` (``scripts/setup.sh`` does so).

The containers are made here directly with the docker SDK (not through the factory), so
that the only difference between the two runs is the seccomp option. They carry
``evalfleet.test=1`` and a unique run id like every container of this directory, and no
worker label, so no reaper ever considers them.
"""

from __future__ import annotations

import json
import textwrap
import uuid
from typing import Any

import pytest
from sandbox_support import IMAGES, TEST_LABELS, left_over

from evalfleet.sandbox.docker.labels import LABEL_RUN
from evalfleet.sandbox.docker.seccomp import security_opt

EPERM = 1

#: Runs as uid 1000 in the container; prints one JSON object: errno per attempt (0 = ok).
PROBE = textwrap.dedent("""
    import ctypes, json, os, resource, subprocess

    def errno_of(call):
        try:
            call()
        except OSError as error:
            return error.errno
        return 0

    def io_uring_setup():
        libc = ctypes.CDLL(None, use_errno=True)
        params = ctypes.create_string_buffer(120)  # struct io_uring_params, zeroed
        fd = libc.syscall(425, 1, params)  # io_uring_setup: 425 on x86_64 and arm64
        if fd < 0:
            raise OSError(ctypes.get_errno(), "io_uring_setup")
        os.close(fd)

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    # The child tells its own RLIMIT_CPU once the parent has tried to change it (gVisor
    # has no /proc/PID/limits to read it from outside).
    child = subprocess.Popen(
        ["python3", "-c", "import resource, sys; sys.stdin.read(); "
                          "print(resource.getrlimit(resource.RLIMIT_CPU)[1])"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        found = {
            "setrlimit_own": errno_of(
                lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (soft - 1, hard))),
            "own_nofile_soft_lowered": resource.getrlimit(resource.RLIMIT_NOFILE)[0] == soft - 1,
            "prlimit_pid0_read": errno_of(lambda: resource.prlimit(0, resource.RLIMIT_CPU)),
            "prlimit_pid0_set": errno_of(
                lambda: resource.prlimit(0, resource.RLIMIT_NOFILE, (soft - 2, hard))),
            "prlimit_own_pid_read": errno_of(
                lambda: resource.prlimit(os.getpid(), resource.RLIMIT_CPU)),
            "prlimit_child_set": errno_of(
                lambda: resource.prlimit(child.pid, resource.RLIMIT_CPU, (1, 1))),
            "child_same_uid": os.stat(f"/proc/{child.pid}").st_uid == os.getuid(),
            "io_uring_setup": errno_of(io_uring_setup),
        }
        cpu = int(child.communicate("", timeout=30)[0])
        found["child_cpu_limit"] = "unlimited" if cpu == resource.RLIM_INFINITY else str(cpu)
    finally:
        child.kill()
        child.wait()
    print(json.dumps(found))
""")


def probe(client: Any, runtime: str, *seccomp: str) -> dict[str, Any]:
    """Run :data:`PROBE` hardened as a sandbox on ``runtime``, ``seccomp`` options added."""
    run_id = f"test-seccomp-{uuid.uuid4().hex[:12]}"
    container = client.containers.create(
        IMAGES["python"], ["python3", "-c", PROBE], user="1000:1000", network_mode="none",
        cap_drop=["ALL"], security_opt=["no-new-privileges", *seccomp], runtime=runtime,
        labels={**TEST_LABELS, LABEL_RUN: run_id}, detach=True)
    try:
        container.start()
        status = container.wait(timeout=60)
        stdout = container.logs(stdout=True, stderr=False).decode()
        stderr = container.logs(stdout=False, stderr=True).decode()
        assert status["StatusCode"] == 0, stderr
        result: dict[str, Any] = json.loads(stdout)
        return result
    finally:
        container.remove(force=True)
        assert left_over(client, run_id) == [], "the host is not clean"


@pytest.fixture(scope="module")
def with_docker_default(docker_client: Any, runtime: str) -> dict[str, Any]:
    return probe(docker_client, runtime)


@pytest.fixture(scope="module")
def with_our_profile(docker_client: Any, runtime: str) -> dict[str, Any]:
    return probe(docker_client, runtime, security_opt())


def test_the_profile_is_what_the_engine_applies(docker_client: Any, runtime: str) -> None:
    """The engine takes the inline profile (a bad one would fail the create or start)."""
    run_id = f"test-seccomp-{uuid.uuid4().hex[:12]}"
    container = docker_client.containers.create(
        IMAGES["python"], ["true"], user="1000:1000", network_mode="none", cap_drop=["ALL"],
        security_opt=["no-new-privileges", security_opt()], runtime=runtime,
        labels={**TEST_LABELS, LABEL_RUN: run_id}, detach=True)
    try:
        applied = docker_client.api.inspect_container(container.id)["HostConfig"]["SecurityOpt"]
        assert applied == ["no-new-privileges", security_opt()]
    finally:
        container.remove(force=True)


def test_own_limits_still_work_under_our_profile(with_our_profile: dict[str, Any]) -> None:
    """setrlimit (glibc: prlimit64 on pid 0) lowers our own soft limit; pid-0 reads work."""
    assert with_our_profile["setrlimit_own"] == 0 and with_our_profile["own_nofile_soft_lowered"]
    assert with_our_profile["prlimit_pid0_read"] == 0
    assert with_our_profile["prlimit_pid0_set"] == 0


def test_prlimit_on_another_process_is_eperm_under_our_profile(
        with_our_profile: dict[str, Any]) -> None:
    """A child of the same uid keeps its limits: the call fails with EPERM, as does any
    prlimit naming a pid, even the caller's own (only pid 0 is allowed)."""
    assert with_our_profile["child_same_uid"]
    assert with_our_profile["prlimit_child_set"] == EPERM
    assert with_our_profile["child_cpu_limit"] == "unlimited"
    assert with_our_profile["prlimit_own_pid_read"] == EPERM


def test_dockers_default_profile_allows_it(with_docker_default: dict[str, Any]) -> None:
    """The same container under Docker's default profile: the child's limit is changed,
    so it is our profile that blocks it."""
    assert with_docker_default["child_same_uid"]
    assert with_docker_default["prlimit_child_set"] == 0
    assert with_docker_default["child_cpu_limit"] == "1"
    assert with_docker_default["prlimit_own_pid_read"] == 0
    assert with_docker_default["setrlimit_own"] == 0
    assert with_docker_default["prlimit_pid0_read"] == 0


def test_io_uring_is_eperm_under_our_profile(with_our_profile: dict[str, Any]) -> None:
    """No ring can be made, so none of io_uring's operations is reachable."""
    assert with_our_profile["io_uring_setup"] == EPERM


def test_dockers_default_profile_makes_a_ring(with_docker_default: dict[str, Any]) -> None:
    """Under Docker 20.10's default profile the same call makes a ring (the host kernel's
    under runc, gVisor's own under runsc): it is our profile that refuses it."""
    assert with_docker_default["io_uring_setup"] == 0
