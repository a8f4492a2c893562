"""The supervisor transport against a candidate that attacks it, under each runtime.

The supervisor is the container's pid 1, root in the container with only CAP_KILL,
CAP_SETGID and CAP_SETUID; every step runs as its own uid with no capability. These tests
pin what keeps it out of the candidate's reach (see ``sandbox/images/supervisor``), the
uid model of docs/operations.md ("The sandbox supervisor"), and that the driver
really uses the supervisor for images that have one.
"""

from __future__ import annotations

import gc
import json
import time
from typing import Any

import pytest
from sandbox_support import OpenSandbox, engine_actions

from evalfleet.sandbox.command import Command, SeedFile
from evalfleet.sandbox.docker.driver import DockerSandbox
from evalfleet.sandbox.evaluation import evaluator, judge, plans
from evalfleet.sandbox.execution import CodeExecution
from evalfleet.sandbox.plan import Plan
from evalfleet.sandbox.results import text


def execs_made(sandbox: DockerSandbox, since: float) -> int:
    """How many ``exec``s the engine created in the sandbox's container since ``since``."""
    events = sandbox.client.events(since=int(since), until=int(time.time()) + 1, decode=True,
                                   filters={"container": sandbox.id, "event": "exec_create"})
    try:
        return sum(1 for _ in events)
    finally:
        events.close()


@pytest.mark.parametrize("image", ["python", "busybox"])
def test_images_are_driven_by_their_supervisor(open_sandbox: OpenSandbox, image: str) -> None:
    """pid 1 is the supervisor, another uid than the candidate's; a whole plan makes no
    exec."""
    since = time.time() - 1
    sandbox = open_sandbox(image)
    assert sandbox.channel is not None
    result = sandbox.exec(Command("cat /proc/1/cmdline; echo; id -u"))
    assert result.stdout.decode().split("\n")[1] == "1000"
    assert "evalfleet-supervisor" in result.stdout.decode()
    _kill_loop_then_test(sandbox)
    assert execs_made(sandbox, since) == 0


@pytest.mark.parametrize("image", ["python", "busybox"])
def test_candidate_cannot_kill_the_supervisor(open_sandbox: OpenSandbox, image: str) -> None:
    """Signals from inside the PID namespace do not reach pid 1 (it handles none of them)."""
    sandbox = open_sandbox(image)
    sandbox.exec(Command("for s in 9 15 2 1 19; do kill -$s 1; done; kill -9 -1"))
    assert sandbox.exec(Command("echo alive")).stdout == b"alive\n"


@pytest.mark.parametrize("path", ["/proc/1/fd/0", "/proc/1/fd/1", "/proc/1/environ",
                                  "/proc/1/mem"])
def test_candidate_cannot_reach_the_supervisors_stream(open_sandbox: OpenSandbox,
                                                       path: str, runtime: str) -> None:
    """pid 1 is another uid and not dumpable: its pipes and memory are closed to the
    candidate, and its environment holds nothing. (gVisor's 2022 builds make
    /proc/PID/environ world-readable: there it reads as empty, which is why the supervisor
    sheds its environment at start.)"""
    sandbox = open_sandbox("busybox")
    result = sandbox.exec(Command(["sh", "-c", 'echo forged > "$1"; cat "$1"', "sh", path]))
    assert result.stdout == b""
    readable = runtime == "runsc" and path == "/proc/1/environ"
    assert result.stderr.count(b"Permission denied") == (1 if readable else 2)
    assert sandbox.exec(Command("echo alive")).stdout == b"alive\n"


def test_candidate_cannot_change_the_supervisors_limits(open_sandbox: OpenSandbox) -> None:
    """prlimit on pid 1 (allowed by the kernel for the same uid) is refused by seccomp; an
    RLIMIT_CPU of 0 would otherwise kill the sandbox."""
    sandbox = open_sandbox("python")
    probe = ("import json, resource\n"
             "out = {}\n"
             "for name in ('RLIMIT_CPU', 'RLIMIT_NOFILE', 'RLIMIT_AS'):\n"
             "    try:\n"
             "        resource.prlimit(1, getattr(resource, name), (0, 0))\n"
             "        out[name] = 'changed'\n"
             "    except OSError as error:\n"
             "        out[name] = error.errno\n"
             "print(json.dumps(out))\n")
    result = sandbox.exec(Command(["python3", "-c", probe]))
    assert json.loads(result.stdout) == {"RLIMIT_CPU": 1, "RLIMIT_NOFILE": 1, "RLIMIT_AS": 1}
    assert sandbox.exec(Command("echo alive")).stdout == b"alive\n"


def test_forged_frames_on_stdout_are_only_output(open_sandbox: OpenSandbox) -> None:
    """What a command prints is carried as payload: a fake exit frame stays stdout."""
    sandbox = open_sandbox("busybox")
    fake = b"x\x00\x00\x00\x010k\x00\x00\x00\x010"
    result = sandbox.exec(Command(["sh", "-c", r"printf 'x\0\0\0\0010k\0\0\0\0010'; exit 3"]))
    assert (result.stdout, result.exit_code) == (fake, 3)


def test_arguments_and_environment_pass_through_exactly(open_sandbox: OpenSandbox) -> None:
    """Empty arguments, empty values and 20,000 arguments reach the command unchanged."""
    sandbox = open_sandbox("busybox")
    result = sandbox.exec(Command(["sh", "-c", 'echo "[$1][$2][$E]"', "sh", "", "x"],
                                  env={"E": ""}))
    assert result.stdout == b"[][x][]\n"
    many = sandbox.exec(Command(["sh", "-c", 'echo "$#"', "sh", *map(str, range(20_000))]))
    assert many.stdout == b"20000\n"


def test_a_missing_workdir_or_program_is_the_candidates(open_sandbox: OpenSandbox) -> None:
    """The supervisor words start failures as runc does, so they stay the candidate's."""
    sandbox = open_sandbox("busybox")
    missing_dir = sandbox.exec(Command("true", workdir="/workspace/nope"))
    assert missing_dir.exit_code is None and "chdir to cwd" in (missing_dir.error or "")
    missing_program = sandbox.exec(Command(["no-such-program"]))
    assert missing_program.exit_code is None
    assert "no such file or directory" in (missing_program.error or "").lower()


def test_a_background_process_holding_stdout_does_not_hold_the_command(
        open_sandbox: OpenSandbox) -> None:
    """The command ends when its process exits; a child keeping the pipe open is cut off."""
    sandbox = open_sandbox("busybox")
    result = sandbox.exec(Command("sleep 60 & echo started", timeout_s=20))
    assert (result.exit_code, result.stdout, result.timed_out) == (0, b"started\n", False)
    assert result.duration_s < 10


def test_a_background_process_keeps_writing_after_its_command(
        open_sandbox: OpenSandbox) -> None:
    """Output written after the command ended is discarded, not refused: the background
    process is not killed by SIGPIPE and goes on working."""
    sandbox = open_sandbox("busybox")
    script = "(sleep 0.3; echo late; echo err >&2; sleep 0.2; echo alive > bg.txt) & echo early"
    assert sandbox.exec(Command(script)).stdout == b"early\n"
    waited = "for i in $(seq 200); do [ -s bg.txt ] && break; sleep 0.05; done; cat bg.txt"
    assert sandbox.exec(Command(waited)).stdout == b"alive\n"


def test_orphans_are_reaped_by_the_supervisor(open_sandbox: OpenSandbox) -> None:
    """pid 1 is the sandbox's init: orphaned processes that exit leave no zombie."""
    sandbox = open_sandbox("busybox")
    sandbox.exec(Command("for i in 1 2 3 4 5; do (sleep 0.1 &); done"))
    settled = ("for i in $(seq 200); do sleep 0.05; "
               "grep -qs '(sleep) [RSD]' /proc/[0-9]*/stat || break; done; "
               "cat /proc/[0-9]*/stat")  # no sleep left running: each reaped, or a zombie
    states = sandbox.exec(Command(settled)).stdout.decode()
    assert [line for line in states.splitlines() if line.split(") ")[1].startswith("Z")] == []


def _kill_loop_then_test(sandbox: DockerSandbox) -> None:
    sandbox.exec(Command("(while :; do kill -9 -1; done) >/dev/null 2>&1 & echo started"))
    test = CodeExecution(validator_key="t", target="file:r", target_path="r.txt",
                         test_command="cat r.txt; echo; echo 1 passed")
    result = plans.run_plan(sandbox, Plan(test_files=(SeedFile("r.txt", "hidden"),), tests=(test,)))
    assert result.tests[0].result.stdout == b"hidden\n1 passed\n"


def test_a_kill_loop_cannot_race_the_stop(open_sandbox: OpenSandbox) -> None:
    """The stop is kill(-1) from pid 1: a candidate killing its own uid in a loop cannot
    kill the stopper first, so the hidden tests still run, without a host-side kill."""
    sandbox = open_sandbox("busybox")
    _kill_loop_then_test(sandbox)


@pytest.mark.parametrize("transport", ["supervisor", "exec"])
def test_a_closed_sandbox_stops_by_itself_and_is_never_killed(
        open_sandbox: OpenSandbox, transport: str) -> None:
    """Closing hangs up on the supervisor, or on the keep-alive of a sandbox driven by
    ``exec``: it exits, its container stops by itself with every process the candidate
    left, and only then is it removed. The engine never kills it: killing a running gVisor
    sandbox full of processes can hold the engine for minutes (bug 17 in
    docs/reliability.md)."""
    sandbox = open_sandbox("busybox", transport)
    sandbox.exec(Command("for i in $(seq 40); do sleep 600 & done; sleep 600",
                         timeout_s=2))
    since = time.time() - 1
    sandbox.close()
    actions = engine_actions(sandbox, since)
    assert "kill" not in actions, actions
    assert "die" in actions and "destroy" in actions, actions
    assert actions.index("die") < actions.index("destroy"), actions


@pytest.mark.parametrize("transport", ["supervisor", "exec"])
def test_a_line_nobody_holds_stops_its_sandbox(docker_client: Any, runtime: str,
                                               transport: str) -> None:
    """A line to a started sandbox that some error path drops without ``close()`` still
    hangs up once it is collected: the sandbox stops by itself, without waiting for the
    reaper, and is never killed."""
    from sandbox_support import TEST_LABELS, profile

    from evalfleet.sandbox.docker.factory import DockerFactory
    from evalfleet.sandbox.docker.limits import Ownership

    factory = DockerFactory(docker_client, worker="supervisor-tests", extra_labels=TEST_LABELS,
                            supervise=transport == "supervisor")
    since = time.time() - 1
    container, line = factory.start(profile("busybox", runtime),
                                    Ownership("supervisor-tests", "dropped", time.time() + 600))
    try:
        del line
        gc.collect()
        assert container.wait(timeout=60)["StatusCode"] is not None
        actions = [event["Action"] for event in docker_client.events(
            since=int(since), until=int(time.time()) + 1, decode=True,
            filters={"container": container.id})]
        assert "die" in actions and "kill" not in actions, actions
    finally:
        container.remove(force=True)


def test_without_a_supervisor_the_driver_uses_exec(docker_client: Any) -> None:
    """``supervise=False`` (or an image without the label): the keep-alive and exec."""
    from sandbox_support import TEST_LABELS, profile

    from evalfleet.sandbox.docker.factory import DockerFactory

    factory = DockerFactory(docker_client, worker="supervisor-tests", extra_labels=TEST_LABELS,
                            supervise=False)
    since = time.time() - 1
    sandbox = factory.acquire(profile("busybox"), run_id="exec-transport")
    try:
        assert sandbox.channel is None
        assert sandbox.exec(Command("id -u")).stdout == b"1000\n"
        assert execs_made(sandbox, since) == 1
    finally:
        sandbox.close()


def test_usage_is_read_inside_when_the_host_cgroups_are_not_visible(
        open_sandbox: OpenSandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker in a container of its own still reports peak memory and CPU time: the
    supervisor reads the same counters the host would."""
    import evalfleet.sandbox.docker.conduit as conduit

    sandbox = open_sandbox("python")
    sandbox.exec(Command(["python3", "-c", "b = bytearray(48 << 20); sum(range(3_000_000))"]))
    on_host = sandbox.usage()
    if sandbox.gvisor:  # the cgroup counts the sandbox's kernel too: no figure, a reason
        assert on_host == {} and "gVisor" in sandbox.usage_unavailable()
        return
    monkeypatch.setattr(conduit, "read_usage", lambda container_id: {})
    inside = sandbox.usage()
    assert inside["memory_peak_bytes"] > 48 << 20 and inside["cpu_seconds"] > 0.05
    if on_host:  # this worker sees the host's cgroups too: the same counters
        assert inside["memory_peak_bytes"] == pytest.approx(on_host["memory_peak_bytes"],
                                                            rel=0.05)
        assert inside["cpu_seconds"] == pytest.approx(on_host["cpu_seconds"], rel=0.2)


#: Prints the caller's uid and capability sets and its no_new_privs flag (asked of the
#: kernel: gVisor's /proc/self/status has no NoNewPrivs line).
IDENTITY = ("import ctypes, json\n"
            "status = dict(line.split(':', 1) for line in open('/proc/self/status'))\n"
            "print(json.dumps({'uid': status['Uid'].split()[0],\n"
            "                  **{k: int(status[k], 16) for k in ('CapEff', 'CapPrm', 'CapBnd')},\n"
            "                  'nnp': ctypes.CDLL(None).prctl(39, 0, 0, 0, 0)}))\n")


def _identity(stdout: str | bytes) -> dict[str, object]:
    text = stdout.decode() if isinstance(stdout, bytes) else stdout
    found: dict[str, object] = json.loads(text.strip().splitlines()[-1])
    return found


def test_every_step_runs_as_its_own_uid_with_no_capability(open_sandbox: OpenSandbox) -> None:
    """Candidate 1000, judge 65532, evaluator 65533: each with CapEff = CapPrm = CapBnd = 0
    and no_new_privs, all started by the supervisor (no exec); the supervisor itself is
    uid 0 with exactly CAP_KILL, CAP_SETGID and CAP_SETUID and an empty bounding set."""
    from evalfleet.sandbox.evaluator import EvaluatorRun

    since = time.time() - 1
    sandbox = open_sandbox("python")
    sandbox.write_files([SeedFile("identity.py", IDENTITY)])
    candidate = _identity(sandbox.exec(Command(["python3", "identity.py"])).stdout)
    test = CodeExecution(validator_key="t", target="file:i", target_path="identity.py",
                         test_command="python3 identity.py")
    judged = _identity(text(judge.code_execution(sandbox, test).result.stdout))
    evaluated = _identity(evaluator.run(sandbox, EvaluatorRun(
        runtime="python", script=IDENTITY)).stdout)
    none = {"CapEff": 0, "CapPrm": 0, "CapBnd": 0, "nnp": 1}
    assert candidate == {"uid": "1000", **none}
    assert judged == {"uid": "65532", **none}
    assert evaluated == {"uid": "65533", **none}
    pid1 = sandbox.exec(Command("grep -E '^(Uid|CapEff|CapPrm|CapBnd):' /proc/1/status"))
    fields = {k: v.split()[0] for k, v in
              (line.split(":", 1) for line in pid1.stdout.decode().splitlines())}
    kill_setgid_setuid = 1 << 5 | 1 << 6 | 1 << 7
    assert fields["Uid"] == "0" and int(fields["CapBnd"], 16) == 0
    assert int(fields["CapEff"], 16) == int(fields["CapPrm"], 16) == kill_setgid_setuid
    assert execs_made(sandbox, since) == 0


#: Tries to attach to pid 1 with ptrace (PTRACE_ATTACH, then PTRACE_SEIZE); prints errnos.
PTRACE = ("import ctypes, os\n"
          "libc = ctypes.CDLL(None, use_errno=True)\n"
          "for request in (16, 0x4206):\n"
          "    rc = libc.ptrace(request, 1, 0, 0)\n"
          "    print(rc, ctypes.get_errno())\n")


def test_candidate_cannot_ptrace_or_signal_the_supervisor(open_sandbox: OpenSandbox) -> None:
    """ptrace(ATTACH/SEIZE) of pid 1 is EPERM; every signal to it is refused (EPERM: another
    uid, and no CAP_KILL) by the candidate and by the judge alike."""
    sandbox = open_sandbox("python")
    traced = sandbox.exec(Command(["python3", "-c", PTRACE]))
    assert traced.stdout == b"-1 1\n-1 1\n"
    signals = "for s in 9 15 2 1 19 10; do kill -$s 1 2>/dev/null || echo refused; done"
    assert sandbox.exec(Command(signals)).stdout == b"refused\n" * 6
    test = CodeExecution(validator_key="t", target="file:x", target_path="x",
                         test_command=signals)
    assert judge.code_execution(sandbox, test).result.stdout == b"refused\n" * 6
    assert sandbox.exec(Command("echo alive")).stdout == b"alive\n"


def test_candidate_cannot_read_the_channel_to_steal_frames(open_sandbox: OpenSandbox) -> None:
    """A background reader of /proc/1/fd/0 (the host's frames) gets nothing: the next
    command's 4 MiB of stdin arrives whole, and a forged 'x' frame written to
    /proc/1/fd/1 never reaches the host."""
    sandbox = open_sandbox("busybox")
    thief = ("(while :; do cat /proc/1/fd/0 >> stolen 2>/dev/null;"
             " printf 'x\\0\\0\\0\\0010' > /proc/1/fd/1 2>/dev/null; done) & echo started")
    assert sandbox.exec(Command(thief)).stdout == b"started\n"
    payload = bytes(range(256)) * 16384
    result = sandbox.exec(Command("cat | wc -c; exit 3", stdin=payload))
    assert (result.stdout.split(), result.exit_code) == ([str(len(payload)).encode()], 3)
    assert sandbox.exec(Command("wc -c < stolen")).stdout.strip() == b"0"


def test_a_sandbox_cannot_see_another_sandboxs_files(open_sandbox: OpenSandbox) -> None:
    """Two sandboxes side by side: what one leaves in its workspace, /tmp and /dev/shm (and
    its processes) is nowhere in the other's view."""
    first, second = open_sandbox("busybox"), open_sandbox("busybox")
    marker = f"c0ffee{time.time_ns()}"
    left = first.exec(Command(f"for d in /workspace /tmp /dev/shm; do echo {marker} > $d/left;"
                              f" done 2>/dev/null; (sleep 61.7; echo {marker}) >/dev/null &"
                              f" grep -l {marker} /workspace/left /tmp/left"))
    assert left.stdout == b"/workspace/left\n/tmp/left\n"
    pattern = f"c0ffe[e]{marker[6:]}"  # matches the marker, not this command's own argv
    look = (f"grep -rl '{pattern}' /workspace /tmp /dev/shm 2>/dev/null;"
            f" cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\\0' ' ' | grep -c '{pattern}'")
    assert first.exec(Command(look)).stdout.endswith(b"\n1\n")  # the probe works
    assert second.exec(Command(look)).stdout == b"0\n"
