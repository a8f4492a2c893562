"""Attacks on the Docker sandbox, each with its specific outcome and a clean host after.

The egress test targets no address outside the sandbox: it shows there is no path out at
all (only a loopback interface, an empty routing table, and a connect to the sandbox's own
unused loopback port refused).
"""

from __future__ import annotations

import os
import time

import pytest
from sandbox_support import OpenSandbox, engine_actions

from evalfleet.sandbox.capture import CaptureBudget, CaptureCheck, ListingCheck
from evalfleet.sandbox.command import Command, SeedFile
from evalfleet.sandbox.errors import SandboxConfigError
from evalfleet.sandbox.evaluation import checks, plans
from evalfleet.sandbox.execution import CodeExecution
from evalfleet.sandbox.plan import Plan
from evalfleet.sandbox.results import DirectoryListing
from evalfleet.scoring.validators import code_execution
from evalfleet.scoring.validators.code_execution import CodeExecutionConfig
from evalfleet.tasks.evaluation.code_executed import record
from evalfleet.tasks.evaluation.recording import directory_listed

MiB = 1024 * 1024
#: The process-level attacks run against both ways of driving a sandbox.
TRANSPORTS = ["supervisor", "exec"]


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("image", ["python", "busybox"])
def test_fork_bomb_is_contained(open_sandbox: OpenSandbox, image: str, transport: str) -> None:
    """pids_limit holds a fork bomb; the candidate is stopped and the sandbox works again.

    Under gVisor driven by ``exec`` the bomb's host threads can outlive its processes by a
    moment, and the engine then refuses the next exec ("try again"): that is the
    candidate's doing, a result and never our failure, and the sandbox recovers."""
    sandbox = open_sandbox(image, transport, pids=64)
    result = sandbox.exec(Command("bomb() { bomb | bomb & }; bomb; sleep 3", timeout_s=6))
    assert result.exit_code is not None or result.timed_out or result.error
    sandbox.stop_candidate()
    deadline = time.monotonic() + 20
    alive = sandbox.exec(Command("echo alive"))
    while alive.stdout != b"alive\n" and time.monotonic() < deadline:
        assert alive.error and "try again" in alive.error, alive  # a result, not a raise
        time.sleep(0.5)
        alive = sandbox.exec(Command("echo alive"))
    assert alive.stdout == b"alive\n", alive


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_memory_bomb_is_oom_killed(open_sandbox: OpenSandbox, transport: str,
                                   runtime: str) -> None:
    """A process past the memory limit is OOM-killed and reported ``oom_killed``, as soon
    as it is (not at the command's timeout). Under runc the kernel kills that process and
    the sandbox goes on; under gVisor the host kills the sandbox whole (its kernel is one
    process there; the engine may leave an exec's stream open after it), and every later
    step was killed with it."""
    sandbox = open_sandbox("python", transport, memory_bytes=64 * MiB)
    started = time.monotonic()
    result = sandbox.exec(Command(
        ["python3", "-c", "a = []\nwhile True: a.append(bytearray(8 << 20))"], timeout_s=120))
    assert (result.exit_code, result.oom_killed, result.timed_out) == (137, True, False)
    assert time.monotonic() - started < 60  # the bomb's death, not its 120 s timeout
    if runtime == "runsc":
        later = sandbox.exec(Command("echo alive"))  # killed with its sandbox: a result
        assert (later.exit_code, later.oom_killed, later.error) == (137, True, None)
        assert sandbox.ended and not sandbox.deadline_exceeded
        sandbox = open_sandbox("python", transport, memory_bytes=64 * MiB)
    killed = sandbox.exec(Command("sleep 30", timeout_s=1))
    assert killed.timed_out and not killed.oom_killed  # a timeout kill is not an OOM


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_cpu_spin_past_the_wall_deadline(open_sandbox: OpenSandbox, transport: str) -> None:
    """The host kills the sandbox at its wall deadline; the spin is reported timed out."""
    sandbox = open_sandbox("busybox", transport, wall_timeout_s=2)
    result = sandbox.exec(Command("while :; do :; done", timeout_s=60))
    assert result.timed_out and sandbox.deadline_exceeded
    later = sandbox.exec(Command("echo too late"))
    assert later.timed_out and later.exit_code is None
    assert not checks.capture(sandbox, CaptureCheck("k", "x"), CaptureBudget()).exists


@pytest.mark.parametrize("transport", ["supervisor", "exec"])
def test_the_wall_deadline_hangs_up_on_the_sandbox(open_sandbox: OpenSandbox,
                                                   transport: str) -> None:
    """At the wall deadline a sandbox is hung up on (its supervisor, or the keep-alive of
    one driven by ``exec``) and stops by itself, with the candidate's processes in it: the
    engine never kills it (killing a running gVisor sandbox full of processes can hold the
    engine for minutes, bug 17 in docs/reliability.md); the command in flight is reported
    timed out all the same."""
    since = time.time() - 1
    sandbox = open_sandbox("busybox", transport, wall_timeout_s=2)
    result = sandbox.exec(Command("for i in $(seq 40); do sleep 600 & done; sleep 600",
                                  timeout_s=60))
    assert result.timed_out and sandbox.deadline_exceeded
    # The command's result comes as the line closes; the container stops a little later
    # (0.1 s under gVisor): the events are read once it has.
    sandbox.container.wait(timeout=60)
    actions = engine_actions(sandbox, since)
    assert "die" in actions and "kill" not in actions, actions


def test_filling_the_workspace_hits_its_size(open_sandbox: OpenSandbox) -> None:
    """Writing past the workspace tmpfs fails in the sandbox; the file stays ≤ the size."""
    sandbox = open_sandbox("busybox", workspace_bytes=8 * MiB)
    result = sandbox.exec(Command("head -c 100000000 /dev/zero > big", timeout_s=20))
    assert result.exit_code != 0  # ENOSPC (busybox says "I/O error")
    capture = checks.capture(sandbox, CaptureCheck("big", "big", max_size_bytes=10),
                             CaptureBudget())
    assert capture.exists and capture.size <= 8 * MiB


def test_file_size_limit(open_sandbox: OpenSandbox) -> None:
    """RLIMIT_FSIZE stops one file before the workspace is full."""
    sandbox = open_sandbox("busybox", fsize_bytes=1 * MiB)
    result = sandbox.exec(Command("head -c 5000000 /dev/zero > big", timeout_s=20))
    assert result.exit_code != 0
    big = checks.capture(sandbox, CaptureCheck("b", "big", max_size_bytes=1), CaptureBudget())
    assert big.size == MiB


def test_network_egress_is_refused(open_sandbox: OpenSandbox) -> None:
    """No interface but loopback and no route at all: nothing can leave the sandbox."""
    sandbox = open_sandbox()
    probe = ("import socket\n"
             "routes = open('/proc/net/route').read().splitlines()[1:]\n"
             "print('routes', len(routes))\n"
             "print('interfaces', *sorted(name for _, name in socket.if_nameindex()))\n"
             "s = socket.socket(); s.settimeout(2)\n"
             "try:\n    s.connect(('127.0.0.1', 9)); print('CONNECTED')\n"
             "except OSError as e:\n    print('loopback refused', e.errno)\n")
    result = sandbox.exec(Command(["python3", "-c", probe], timeout_s=20))
    assert b"routes 0" in result.stdout  # no default route: every outside address unreachable
    assert b"CONNECTED" not in result.stdout
    assert b"interfaces lo\n" in result.stdout  # gVisor has no /sys/class/net to list


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_gibibyte_on_stdout_is_cut_at_the_cap(open_sandbox: OpenSandbox,
                                                transport: str) -> None:
    """1 GiB written to stdout: exactly the cap is kept, ``truncated`` is set."""
    sandbox = open_sandbox("busybox", transport)
    result = sandbox.exec(Command("head -c 1073741824 /dev/zero; echo done >&2",
                                  output_cap_bytes=MiB, timeout_s=60))
    assert len(result.stdout) == MiB and result.stdout_truncated and not result.timed_out


@pytest.mark.parametrize("target", ["/etc/shadow", "/proc/self/environ", "/etc/passwd"])
def test_symlinked_capture_is_not_followed(open_sandbox: OpenSandbox, target: str) -> None:
    """A capture path that is a symlink is refused, whatever it points at."""
    sandbox = open_sandbox()
    sandbox.exec(Command(["ln", "-s", target, "answer.txt"]))
    capture = checks.capture(sandbox, CaptureCheck("a", "answer.txt"), CaptureBudget())
    assert not capture.exists and capture.content is None and "link" in (capture.error or "")


def test_symlinked_parent_directory_stays_inside_the_sandbox(open_sandbox: OpenSandbox) -> None:
    """A linked parent is resolved by the sandbox's own tar, as the candidate's uid:
    /etc/shadow stays unreadable, and nothing is read on the host."""
    sandbox = open_sandbox()
    sandbox.exec(Command("ln -s /etc out"))
    shadow = checks.capture(sandbox, CaptureCheck("s", "out/shadow"), CaptureBudget())
    assert not shadow.exists
    hostname = checks.capture(sandbox, CaptureCheck("h", "out/hostname"), CaptureBudget())
    assert hostname.exists and hostname.content == sandbox.exec(
        Command("cat /etc/hostname")).stdout


@pytest.mark.parametrize("path", ["../etc/passwd", "/workspace/../etc/passwd", "a/../../x"])
def test_dotdot_capture_paths_are_refused(open_sandbox: OpenSandbox, path: str) -> None:
    """``..`` in a capture or listing path is refused before any exec."""
    sandbox = open_sandbox("busybox")
    capture = checks.capture(sandbox, CaptureCheck("k", path), CaptureBudget())
    assert not capture.exists and "'..'" in (capture.error or "")
    listing = checks.list_directory(sandbox, ListingCheck("l", path))
    assert listing.entries == () and listing.error


def test_huge_directory_listing_is_capped(open_sandbox: OpenSandbox) -> None:
    """20,000 files list as the entry cap, flagged truncated."""
    sandbox = open_sandbox("python", listing_entries=500)
    made = sandbox.exec(Command("mkdir d && cd d && seq 1 20000 | xargs touch", timeout_s=60))
    assert made.exit_code == 0
    listing = checks.list_directory(sandbox, ListingCheck("l", "d"))
    assert len(listing.entries) == 500 and listing.truncated
    assert directory_listed(listing)["max_entries"] == 500


def test_tar_bombs(open_sandbox: OpenSandbox) -> None:
    """Seeds past ``seed_bytes`` are refused; a huge file or a directory cannot flood
    the host through a capture (bounded by the cap, directories refused)."""
    sandbox = open_sandbox("busybox", seed_bytes=MiB)
    with pytest.raises(SandboxConfigError):
        sandbox.write_files([SeedFile(f"f{i}", b"x" * 300_000) for i in range(4)])
    sandbox.exec(Command("head -c 50000000 /dev/zero > huge; mkdir dir; cp huge dir/",
                         timeout_s=30))
    huge = checks.capture(sandbox, CaptureCheck("h", "huge", max_size_bytes=1024), CaptureBudget())
    assert (huge.size, len(huge.content or b""), huge.truncated) == (50_000_000, 1024, True)
    directory = checks.capture(sandbox, CaptureCheck("d", "dir"), CaptureBudget())
    assert not directory.exists and "regular" in (directory.error or "")


#: Prints the caller's no_new_privs flag, asked of the kernel (gVisor's /proc/self/status
#: has no NoNewPrivs line).
NO_NEW_PRIVS = "import ctypes; print(ctypes.CDLL(None).prctl(39, 0, 0, 0, 0))"  # PR_GET_...


def test_no_privilege_escalation(open_sandbox: OpenSandbox) -> None:
    """Non-root, no capabilities, no-new-privileges: setuid and sudo get nowhere."""
    sandbox = open_sandbox()
    status = sandbox.exec(Command("grep -E '^(Uid|CapEff|CapPrm|CapBnd)' /proc/self/status"))
    fields = dict(line.split(":", 1) for line in status.stdout.decode().splitlines())
    assert fields["Uid"].split()[0] == "1000"
    assert sandbox.exec(Command(["python3", "-c", NO_NEW_PRIVS])).stdout == b"1\n"
    assert int(fields["CapEff"], 16) == 0 and int(fields["CapPrm"], 16) == 0
    assert int(fields["CapBnd"], 16) == 0
    assert sandbox.exec(Command("sudo id")).exit_code == 127
    su = sandbox.exec(Command("su -c id root < /dev/null", timeout_s=10))
    assert su.exit_code != 0 and b"uid=0" not in su.stdout
    setuid = sandbox.exec(Command("cp /bin/cat ./c && chmod u+s ./c && ./c /etc/shadow"))
    assert setuid.exit_code != 0 and b"root:" not in setuid.stdout


def test_worker_environment_is_not_visible(open_sandbox: OpenSandbox,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing of the worker's environment reaches the sandbox."""
    monkeypatch.setenv("EVALFLEET_TEST_CANARY", "s3cr3t-canary")
    sandbox = open_sandbox()
    seen = sandbox.exec(Command("env; cat /proc/1/environ; cat /proc/self/environ")).stdout
    assert b"s3cr3t-canary" not in seen and os.environ["EVALFLEET_TEST_CANARY"]
    # pid 1 (the supervisor) is another uid, and holds no environment: nothing to read
    # even where its /proc/1/environ is world-readable (gVisor's 2022 builds).
    assert sandbox.exec(Command("cat /proc/1/environ")).stdout == b""


@pytest.mark.parametrize("path", ["/etc/evil", "/evil", "/usr/bin/evil", "/home/evil"])
def test_writing_outside_the_workspace_fails(open_sandbox: OpenSandbox, path: str) -> None:
    """The root filesystem is read-only; only the capped workspace and /tmp are writable."""
    sandbox = open_sandbox("python")
    result = sandbox.exec(Command(["sh", "-c", 'echo x > "$1"', "sh", path]))
    assert result.exit_code != 0
    assert b"Read-only" in result.stderr or b"ermission" in result.stderr
    tmp = sandbox.exec(Command("head -c 20000000 /dev/zero > /tmp/big", timeout_s=20))
    assert tmp.exit_code != 0  # /tmp is a 16 MiB tmpfs


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_daemonised_background_process_cannot_tamper(open_sandbox: OpenSandbox,
                                                     transport: str) -> None:
    """A double-forked, SIGTERM-ignoring daemon in its own session is stopped before the
    tests and captures: neither sees its writes."""
    daemon = ("import os, signal, time\n"
              "if os.fork() == 0:\n"
              "    os.setsid()\n"
              "    if os.fork() == 0:\n"
              "        signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
              "        while True:\n"
              "            open('/workspace/.t', 'w').write('tampered')\n"
              "            os.replace('/workspace/.t', '/workspace/result.txt')\n"
              "            print('tampered', flush=True)\n"
              "            time.sleep(0.01)\n")
    sandbox = open_sandbox("python", transport)
    sandbox.exec(Command(["python3", "-c", daemon], timeout_s=10))
    running = "for _ in $(seq 200); do [ -e result.txt ] && break; sleep 0.05; done; cat result.txt"
    assert sandbox.exec(Command(running)).stdout == b"tampered"  # the daemon outlived its exec
    from evalfleet.sandbox.execution import CodeExecution
    from evalfleet.sandbox.plan import Plan

    test = CodeExecution(validator_key="t", target="file:r", target_path="result.txt",
                         test_command="sleep 0.3; cat result.txt; echo; echo 1 passed")
    result = plans.run_plan(sandbox, Plan(test_files=(SeedFile("result.txt", "clean"),),
                                   tests=(test,), checks=(CaptureCheck("r", "result.txt"),)))
    assert result.tests[0].result.stdout == b"clean\n1 passed\n"
    assert result.captures[0].content == b"clean"


def test_plan_collects_in_one_request(open_sandbox: OpenSandbox,
                                   caplog: pytest.LogCaptureFixture) -> None:
    """After the tests, stop + every capture and listing is one request, never the fallback."""
    from evalfleet.sandbox.plan import Plan

    sandbox = open_sandbox("busybox")
    sandbox.write_files([SeedFile(f"f{i}", str(i)) for i in range(5)])
    calls: list[object] = []
    original = sandbox.conduit.run

    def counting(*args: object, **kwargs: object) -> object:
        calls.append(args[0])
        return original(*args, **kwargs)  # type: ignore[arg-type]

    sandbox.conduit.run = counting  # type: ignore[method-assign]
    asked = (*(CaptureCheck(f"k{i}", f"f{i}") for i in range(5)), ListingCheck("l", "."))
    result = plans.run_plan(sandbox, Plan(checks=asked))
    assert [c.content for c in result.captures] == [str(i).encode() for i in range(5)]
    assert len(calls) == 2  # stop (+ no test files), then stop + collect
    assert "unusable" not in caplog.text



#: Directories whose names hold a line break, each with a file below: a path listed whole
#: would read, split at the break, as an entry ``./forged.txt`` (or ``./cr.txt``) that is
#: not there. A name cannot hold ``/``; a path can.
FORGERS = ("x=$(printf 'x\\n0|f|.') && mkdir \"$x\" && touch \"$x/forged.txt\" && "
           "y=$(printf 'y\\r0|f|.') && mkdir \"$y\" && touch \"$y/cr.txt\" && touch ok")


@pytest.mark.parametrize("image", ["busybox", "python"])
@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_file_name_cannot_forge_listing_entries(open_sandbox: OpenSandbox, image: str,
                                                  transport: str) -> None:
    """No entry is listed that is not there: a forged ``forged.txt`` would pass a pack's
    ``file_exists`` or ``directory_structure``. A path with a newline is left out (it
    cannot be told from two entries); a carriage return is part of its name. The same in
    a listing of its own and in the plan's collect."""
    from evalfleet.sandbox.plan import Plan

    sandbox = open_sandbox(image, transport)
    assert sandbox.exec(Command(FORGERS)).exit_code == 0
    listed = checks.list_directory(sandbox, ListingCheck("l", "."))
    collected = plans.run_plan(sandbox, Plan(checks=(ListingCheck("l", "."),))).listings[0]
    for listing in (listed, collected):
        assert isinstance(listing, DirectoryListing) and listing.error is None
        assert [entry.path for entry in listing.entries] == [
            "/workspace/ok", "/workspace/y\r0|f|.", "/workspace/y\r0|f|./cr.txt"]


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("spoil", ["rm -rf /tmp/out", "chmod 000 /tmp/out"])
def test_a_test_kept_from_starting_fails(open_sandbox: OpenSandbox, transport: str,
                                         spoil: str) -> None:
    """A workspace pack whose captured file is outside the workspace runs its test in that
    file's directory; a candidate heading for a loss removes the directory (or locks the
    judge out of it). The test cannot start: a failed test, never an ``execution_error``,
    which would void the run and turn the loss into no result."""
    spec = CodeExecution(validator_key="tests", target="file:sol",
                         target_path="/tmp/out/sol.py",
                         test_command="python3 sol.py && echo '1 passed'")
    made = "mkdir -p /tmp/out && echo 'print(1)' > /tmp/out/sol.py && "
    result = plans.run_plan(open_sandbox("python", transport),
        Plan(commands=(Command(made + spoil),), tests=(spec,)))
    assert result.commands[0].exit_code == 0, result.commands[0]
    done = record(result.tests[0])
    assert (done.execution_error, done.passed_tests) == ("", None), done
    assert done.exit_code not in (0, None), done
    if spoil.startswith("rm"):  # with a mode of 000, runc's exec enters it, and python fails
        assert done.stderr.startswith("[evalfleet] the test could not start: "), done
    judged = code_execution.score(done.to_event_payload(), CodeExecutionConfig(
        test_command=spec.test_command))
    assert (judged.state, judged.verdict, judged.score) == ("available", "fail", 0.0)


#: Deliverables that take no space in the workspace and a great deal elsewhere: files made
#: by ``truncate``, whose length is not backed by pages until written.
HOLLOW_DELIVERABLES = {
    # 26,000 one-byte files: 26 KB by length, 102 MiB of pages in the 96 MiB room; a page
    # each, 8,192 fit the 32 MiB budget
    "many one-byte files": ("for i in range(26_000): hollow(f'sol/f{i}', 1)", 8192),
    # 500 files of 60 MiB (the fsize limit is 64): a 30 GiB tar stream; none fits
    "sparse giants": ("for i in range(500): hollow(f'sol/g{i}', 60 << 20)", 0),
}
HOLLOW = "def hollow(name, size):\n    with open(name, 'w') as made:\n        made.truncate(size)\n"


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize(("hollow", "delivered"), HOLLOW_DELIVERABLES.values(),
                         ids=HOLLOW_DELIVERABLES.keys())
def test_hollow_deliverables_cannot_void_a_clean_room_run(
        open_sandbox: OpenSandbox, transport: str, hollow: str, delivered: int) -> None:
    """Found by a red-team pass: deliverables charged by their length overflowed the
    judge's room, or kept the export streaming past the host's grace period; either way
    the room's write or the next request failed as if the fleet had (the run void, a loss
    turned into no result). Now the export is cut at its cap inside the sandbox, each file
    is charged the pages it takes, and the test runs on what fits."""
    test = CodeExecution(validator_key="tests", target="file:sol", target_path="sol",
                         test_command="find \"$DELIVERABLES\" -type f | wc -l")
    script = f"import os\nos.mkdir('sol')\n{HOLLOW}{hollow}"
    make = Command(["python3", "-c", script], timeout_s=120)
    result = plans.run_plan(open_sandbox("python", transport),
        Plan(commands=(make,), deliverables=("sol",), tests=(test,)))
    assert result.commands[0].exit_code == 0, result.commands[0]
    run = result.tests[0].result
    assert run.exit_code == 0 and run.error is None, run
    assert int(run.stdout) == delivered, run  # what the room's 32 MiB budget holds
