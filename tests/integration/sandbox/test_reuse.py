"""Sandbox reuse, under each runtime: a container serves up to ``reuse_runs`` runs, each
after a verified reset, unless a run hit a limit; a later run gets the first run's
environment-probe answer and usage of its own; the worker's start-up probe verifies a
reset. (What run A may leave for run B: ``test_carry_over``.)
"""

from __future__ import annotations

import dataclasses
import fcntl
import os
import struct
import time
from typing import Any

import pytest
from sandbox_support import IMAGES, TEST_LABELS, WORKER, left_over, requests_of, wait_for

from evalfleet.sandbox import envprobe
from evalfleet.sandbox.command import Command
from evalfleet.sandbox.docker import pool as pool_module
from evalfleet.sandbox.docker.factory import DockerFactory
from evalfleet.sandbox.docker.pool import WarmPool
from evalfleet.sandbox.envprobe import EnvironmentProbe
from evalfleet.sandbox.evaluation import environment, plans
from evalfleet.sandbox.plan import Plan
from evalfleet.sandbox.profile import Limits, Profile

pytestmark = pytest.mark.integration

MiB = 1024 * 1024


@pytest.mark.parametrize(("command", "limits", "reason"), [
    ("sleep 30", {"exec_timeout_s": 1}, "timeout"),
    ("head -c 3000000 /dev/zero", {"output_cap_bytes": MiB}, "output"),
    ("python3 -c 'a = []\nwhile True: a.append(bytearray(8 << 20))'",
     {"memory_bytes": 96 * MiB}, "oom"),
    ("sleep 30", {"wall_timeout_s": 2}, "deadline"),
])
def test_a_sandbox_that_hit_a_limit_is_discarded(docker_client: Any, reusing: Profile,
                                                 command: str, limits: dict[str, Any],
                                                 reason: str) -> None:
    """A run that met its timeout, an output cap, the memory limit or the wall deadline
    leaves its container to be removed, never reused."""
    profile = dataclasses.replace(reusing, limits=dataclasses.replace(reusing.limits, **limits))
    factory = DockerFactory(docker_client, worker=WORKER, extra_labels=TEST_LABELS)
    pool = WarmPool(factory, [(profile, 1)])
    try:
        pool.fill()
        with pool.acquire(profile, run_id="limited") as sandbox:
            first = sandbox.id
            sandbox.exec(Command(command, timeout_s=limits.get("exec_timeout_s", 60)))
        assert dict(pool.stats()[0].discards) == {reason: 1}
        with pool.acquire(profile, run_id="after") as later:
            assert later.id != first and later.exec(Command("echo ok")).stdout == b"ok\n"
    finally:
        pool.close()
    assert left_over(docker_client, "warm", WORKER) == []


def test_a_sandbox_serves_its_runs_then_goes(reuse_pool: WarmPool, reusing: Profile) -> None:
    """One container serves ``reuse_runs`` runs, each numbered, then is discarded."""
    ids = []
    for run in range(1, 6):
        with reuse_pool.acquire(reusing, run_id=f"run-{run}") as sandbox:
            assert sandbox.reused.run == run
            # find, not ls: GNU ls fails with EINVAL in gVisor 20221219 (statx), and an
            # empty listing would then pass whatever the workspace held
            listed = sandbox.exec(Command("find /workspace -mindepth 1 && echo $$ > mine"))
            assert (listed.exit_code, listed.stdout) == (0, b""), listed
            ids.append(sandbox.id)
    stats = reuse_pool.stats()[0]
    assert len(set(ids)) == 1 and (stats.reuses, dict(stats.discards)) == (4, {"runs": 1})


def test_a_later_runs_environment_probe_is_the_first_runs_answer(reuse_pool: WarmPool,
                                                                reusing: Profile) -> None:
    """Run A's probe asks the sandbox, and A then fills most of the workspace; after the
    reset B's plan gets A's answer without a request for it — and the answer is still
    true: the same probe asked of B's sandbox finds the same space, tools and verdict."""
    probe = EnvironmentProbe(tools=("sh", "python3"), free_bytes=1024)
    fill = Command("head -c 48000000 /dev/zero > big && df -Pk . | tail -1", timeout_s=60)
    both = [Plan(commands=(fill,), environment=probe), Plan(environment=probe)]
    reports, requests = [], []
    for run, plan in zip(("env-a", "env-b"), both, strict=True):
        with reuse_pool.acquire(reusing, run_id=run) as sandbox:
            sent = requests_of(sandbox)
            result = plans.run_plan(sandbox, plan)
            reports.append(result.environment)
            requests.append(sum(envprobe.SCRIPT in argv for argv in sent))
            if run == "env-b":
                asked = environment.check(sandbox, probe)
            if run == "env-a":
                assert result.commands[0].exit_code == 0  # the workspace was filled
    first, later = reports
    assert first is not None and later is not None
    assert requests == [1, 0] and first.duration_s > 0 and later.duration_s == 0
    assert first.problems == later.problems == asked.problems == ()
    assert later.free_bytes == first.free_bytes == asked.free_bytes
    assert later.writable and asked.writable


def test_a_reused_runs_usage_is_its_own(reuse_pool: WarmPool, reusing: Profile,
                                        runtime: str) -> None:
    """CPU time and peak memory of the second run are not the first run's: re-based, or
    ``None`` with the reason (under gVisor usage is not measured at all)."""
    burn = ["python3", "-c", "import time\nb = bytearray(200 << 20)\nt = time.process_time()\n"
                             "while time.process_time() - t < 1: pass"]
    usages = []
    for run in ("burn", "idle"):
        with reuse_pool.acquire(reusing, run_id=run) as sandbox:
            if run == "burn":
                sandbox.exec(Command(burn, timeout_s=60))
            result = plans.run_plan(sandbox, Plan())
            usages.append((dict(result.usage), result.usage_unavailable))
    (burnt, _), (idle, why) = usages
    if runtime == "runsc":
        assert burnt == idle == {} and "gVisor" in why
        return
    assert burnt["cpu_seconds"] > 1 and idle["cpu_seconds"] is not None
    assert idle["cpu_seconds"] < burnt["cpu_seconds"] / 2
    if idle["memory_peak_bytes"] is None:
        assert "memory_peak_bytes" in why
    else:
        assert idle["memory_peak_bytes"] < burnt["memory_peak_bytes"] / 2


def test_the_start_up_probe_verifies_a_reset(docker_client: Any, reusing: Profile) -> None:
    """On this engine a reset of the reusing profile's sandbox verifies, and the probe
    leaves no container behind."""
    from evalfleet.sandbox.docker.reuse import probe

    factory = DockerFactory(docker_client, worker=WORKER, extra_labels=TEST_LABELS)
    assert probe(factory, reusing) == ""
    assert left_over(docker_client, "reuse-probe", WORKER) == []


def test_an_evaluators_run_is_reset_and_reused(reuse_pool: WarmPool, reusing: Profile) -> None:
    """The evaluator writes its files in its own home (a directory the candidate's uid made
    in /tmp, mode 1777): the reset cleans it as both uids, and the next run reuses the
    sandbox and finds nothing of it."""
    from evalfleet.sandbox.evaluator import EvaluatorRun

    script = ("import os\nopen(os.path.join(os.environ['HOME'], 'notes'), 'w').write('x')\n"
              "print('{\"scores\": {\"c\": 1000}}')\n")
    with reuse_pool.acquire(reusing, run_id="evaluated") as sandbox:
        first = sandbox.id
        result = plans.run_plan(sandbox, Plan(commands=(Command("echo 42 > answer.txt"),),
                                       evaluator=EvaluatorRun(runtime="python", script=script)))
        assert result.evaluator is not None and result.evaluator.exit_code == 0, result.evaluator
    assert dict(reuse_pool.stats()[0].discards) == {}
    with reuse_pool.acquire(reusing, run_id="after-evaluator") as later:
        assert later.id == first
        # Python, not ls: GNU ls's statx(AT_NO_AUTOMOUNT) is EINVAL in gVisor 20221219
        left = later.exec(Command("python3 -c \"import os; print(os.listdir('/tmp'), "
                                  "os.listdir('/workspace'))\""))
        assert left.stdout == b"[] []\n", left


def test_a_reused_run_costs_the_engine_nothing(docker_client: Any, reusing: Profile,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Taking a reused container, its run, its reset and handing it back make no request
    to the engine: reuse takes the engine off the run's path. (The refill used to be woken
    at every take and hand-back, and each pass lists the engine's containers: a listing
    per run.)"""
    monkeypatch.setattr(pool_module, "REFILL_INTERVAL_S", 600.0)  # no periodic pass now
    profile = dataclasses.replace(reusing, reuse_runs=100)
    pool = WarmPool(DockerFactory(docker_client, worker=WORKER, extra_labels=TEST_LABELS),
                    [(profile, 1)]).start()
    sent: list[str] = []
    try:
        wait_for(lambda: pool.stats()[0].idle == 1)
        send = docker_client.api.send
        monkeypatch.setattr(docker_client.api, "send",
                            lambda request, **kw: sent.append(request.url) or send(request, **kw))
        for run in range(8):
            with pool.acquire(profile, run_id=f"quiet-{run}") as sandbox:
                assert sandbox.exec(Command("echo ok")).stdout == b"ok\n"
            time.sleep(0.1)  # idle between runs, as in a fleet: a woken refill lists now
        monkeypatch.undo()
        stats = pool.stats()[0]
    finally:
        pool.close()
    assert (stats.reuses, dict(stats.discards)) == (7, {})
    assert sent == []


@pytest.mark.parametrize("lock", ["flock", "posix", "ofd"])
def test_a_lock_that_outlives_every_process_leaves_the_reset_unverified(
        docker_client: Any, lock: str) -> None:
    """A lock on the workspace that no process of the sandbox holds — in a real attack a
    locked description queued on a unix socket (``test_carry_over``, "locks in flight");
    here one held by the host, which the supervisor cannot stop — leaves the reset
    unverified (the next run would find ``/workspace`` locked); once it is gone, a reset is
    verified. runc only: gVisor keeps its own lock table, out of the host's reach."""
    profile = Profile(name="test-lock", image=IMAGES["busybox"], runtime="runc", reuse_runs=5,
                      limits=Limits(wall_timeout_s=120))
    pool = WarmPool(DockerFactory(docker_client, worker=WORKER, extra_labels=TEST_LABELS),
                    [(profile, 1)])
    try:
        pool.fill()
        with pool.acquire(profile, run_id="locked") as sandbox:
            sandbox.release = None  # reset by hand, then removed
            pid = docker_client.api.inspect_container(sandbox.id)["State"]["Pid"]
            fd = os.open(f"/proc/{pid}/root/workspace", os.O_RDONLY)
            try:
                take_lock(fd, lock)
                held = sandbox.reset()
            finally:
                os.close(fd)
            free = sandbox.reset()
    finally:
        pool.close()
    assert not held.verified and "new: #lock /workspace" in held.reason, held
    assert free.verified, free


def take_lock(fd: int, kind: str) -> None:
    """A read lock (POSIX or OFD) or an exclusive flock on ``fd``."""
    if kind == "flock":
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    elif kind == "posix":
        fcntl.lockf(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    else:  # struct flock: l_type, l_whence, l_start, l_len, l_pid
        fcntl.fcntl(fd, fcntl.F_OFD_SETLK, struct.pack("hhqqi4x", fcntl.F_RDLCK, 0, 0, 0, 0))
