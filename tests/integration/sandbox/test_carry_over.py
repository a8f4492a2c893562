"""Carry-over attacks, under each runtime: run A (one submitter) tries to leave something
for run B (another), and B, in the same container after its reset, scores exactly as it
does in a fresh sandbox — or the container was discarded and B got a fresh one.

Each attack says which of the two it expects: the reset removes every attack here but
inode exhaustion, which lists more entries than a reset will look through (the container
is discarded, unverified). Under gVisor a reusing profile cannot create lasting IPC objects
at all (gVisor lists none, so no reset could verify them gone): there A is refused.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from evalfleet.sandbox.command import Command, SeedFile
from evalfleet.sandbox.docker.driver import DockerSandbox
from evalfleet.sandbox.docker.pool import WarmPool
from evalfleet.sandbox.evaluation import plans
from evalfleet.sandbox.execution import CodeExecution
from evalfleet.sandbox.plan import Plan
from evalfleet.sandbox.profile import Profile
from evalfleet.sandbox.results import text

pytestmark = pytest.mark.integration

#: The SysV key, POSIX queue and abstract socket name run A plants and run B looks for.
KEY = 0x45464C54

#: Run B: everything a submission could notice of an earlier run, as one JSON line.
OBSERVE = r"""
import ctypes, errno, fcntl, json, os, socket, stat
libc = ctypes.CDLL(None, use_errno=True)
KEY = 0x45464C54
def err():
    return errno.errorcode.get(ctypes.get_errno(), str(ctypes.get_errno()))
def tree(root):
    found = []
    for path, dirs, files in os.walk(root, onerror=lambda e: found.append("unreadable")):
        for name in dirs + files:
            st = os.lstat(os.path.join(path, name))
            size = st.st_size if stat.S_ISREG(st.st_mode) else ""
            found.append(f"{os.path.join(path, name)} {stat.filemode(st.st_mode)} {size}")
    return sorted(found)
seen = {root: tree(root) for root in ("/workspace", "/tmp", "/dev/shm", "/dev/mqueue")}
seen["modes"] = {r: oct(os.stat(r).st_mode) for r in ("/workspace", "/tmp", "/dev/shm")}
seen["processes"] = len([p for p in os.listdir("/proc") if p.isdigit()
                         and int(p) not in (1, os.getpid())])
seen["sysv"] = [libc.shmget(KEY, 0, 0) >= 0 or err(), libc.msgget(KEY, 0) >= 0 or err(),
                libc.semget(KEY, 0, 0) >= 0 or err()]
seen["sysv_listed"] = {k: open(f"/proc/sysvipc/{k}").read().count("\n")
                       for k in ("shm", "msg", "sem") if os.path.exists(f"/proc/sysvipc/{k}")}
libc.mq_open.argtypes = [ctypes.c_char_p, ctypes.c_int]
seen["mq"] = libc.mq_open(b"/evalfleet-carry", os.O_RDONLY) >= 0 or err()
s = socket.socket(socket.AF_UNIX)
try:
    s.connect("\0evalfleet-carry"); seen["abstract"] = "connected"
except OSError as e:
    seen["abstract"] = errno.errorcode[e.errno]
for path in ("/workspace/lock", "/tmp/lock"):
    with open(path, "a") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB); seen[path] = "locked"
        except OSError as e:
            seen[path] = errno.errorcode[e.errno]
    os.remove(path)
for d in ("/workspace", "/tmp"):
    fd = os.open(d, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB); seen[f"flock {d}"] = "free"
    except OSError as e:
        seen[f"flock {d}"] = errno.errorcode[e.errno]
    os.close(fd)
for d in ("/workspace", "/tmp", "/dev/shm"):
    try:
        with open(f"{d}/space", "wb") as f:
            f.write(b"x" * (4 << 20))
        seen[f"space {d}"] = "ok"
    except OSError as e:
        seen[f"space {d}"] = errno.errorcode[e.errno]
    os.remove(f"{d}/space")
os.mkdir("/workspace/inodes")
try:
    for i in range(300):
        open(f"/workspace/inodes/{i}", "w").close()
    seen["inodes"] = "ok"
except OSError as e:
    seen["inodes"] = errno.errorcode[e.errno]
seen["cwd"] = os.getcwd()
seen["env"] = dict(os.environ)
import json as again  # a json.py left in the workspace would be imported here
print(again.dumps(seen, sort_keys=True))
"""

#: Detaches the rest of a script into a daemon: double fork, own session, SIGTERM ignored.
DAEMON = """
import os, signal, time
if os.fork():
    print("planted", flush=True); os._exit(0)
os.setsid()
if os.fork():
    os._exit(0)
signal.signal(signal.SIGTERM, signal.SIG_IGN)
for fd in (0, 1, 2):
    os.close(fd)
"""

#: Run A per attack: a Python script that prints ``planted``, or ``refused`` where the
#: sandbox does not let it (gVisor's reusing profiles and lasting IPC).
ATTACKS = {
    "files and dot-files": """
import os
for d in ("/workspace", "/tmp"):
    os.makedirs(f"{d}/.cache/deep/er", exist_ok=True)
    for name in (".hidden", "visible", ".cache/deep/er/x"):
        open(f"{d}/{name}", "w").write("left by A")
open("/workspace/json.py", "w").write("print('HIJACKED'); raise SystemExit(3)")
open("/workspace/.profile", "w").write("export EVIL=1")
print("planted")
""",
    "chmod 000 directory": """
import os
for d in ("/workspace", "/tmp", "/dev/shm"):
    os.makedirs(f"{d}/locked/inner")
    open(f"{d}/locked/inner/secret", "w").write("left by A")
    os.chmod(f"{d}/locked/inner", 0); os.chmod(f"{d}/locked", 0)
print("planted")
""",
    "fifo": """
import os
os.mkfifo("/workspace/fifo"); os.mkfifo("/tmp/fifo"); os.mkfifo("/dev/shm/fifo")
print("planted")
""",
    "double-forked setsid daemon": DAEMON + """
while True:
    open("/workspace/result.txt", "w").write("tampered")
    time.sleep(0.01)
""",
    "process sleeping in the background": """
import subprocess
subprocess.Popen(["sleep", "600"], start_new_session=True)
subprocess.Popen(["sh", "-c", "sleep 600 & sleep 600"])
print("planted")
""",
    "SysV shm, sem and msg": """
import ctypes, errno
libc = ctypes.CDLL(None, use_errno=True)
KEY, CREATE = 0x45464C54, 0o1000 | 0o666
made = [libc.shmget(KEY, 4096, CREATE), libc.msgget(KEY, CREATE), libc.semget(KEY, 1, CREATE)]
if all(m >= 0 for m in made):
    libc.msgsnd(made[1], b"\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x00hello", 5, 0)
    print("planted")
elif all(m < 0 for m in made) and ctypes.get_errno() == errno.EPERM:
    print("refused")
""",
    "POSIX message queue": """
import ctypes, errno, os
libc = ctypes.CDLL(None, use_errno=True)
libc.mq_open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int, ctypes.c_void_p]
q = libc.mq_open(b"/evalfleet-carry", os.O_CREAT | os.O_RDWR, 0o666, None)
if q >= 0:
    libc.mq_send(q, b"left by A", 9, 0); print("planted")
elif ctypes.get_errno() == errno.EPERM:
    print("refused")
""",
    "abstract unix socket listener": DAEMON + """
import socket
s = socket.socket(socket.AF_UNIX); s.bind("\\0evalfleet-carry"); s.listen(8)
while True:
    s.accept()[0].close()
""",
    "full tmpfs": """
import errno
for d in ("/workspace", "/tmp", "/dev/shm"):
    for n in range(100):  # files of at most RLIMIT_FSIZE, until the mount is full
        try:
            with open(f"{d}/fill{n}", "wb") as f:
                while True:
                    f.write(b"x" * (1 << 20))
        except OSError as e:
            assert e.errno in (errno.ENOSPC, errno.EFBIG), e
            if e.errno == errno.ENOSPC:
                break
    else:
        raise SystemExit(f"{d} never filled up")
print("planted")
""",
    "inode exhaustion": """
import errno, os
os.mkdir("/workspace/many")
try:
    for i in range(70000):
        open(f"/workspace/many/{i}", "w").close()
except OSError as e:
    assert e.errno == errno.ENOSPC, e
print("planted")
""",
    "file locks": DAEMON + """
import fcntl
a = open("/workspace/lock", "a"); fcntl.flock(a, fcntl.LOCK_EX)
b = open("/tmp/lock", "a"); fcntl.lockf(b, fcntl.LOCK_EX)
while True:
    time.sleep(1)
""",
    "locks in flight": """
import array, fcntl, os, socket
held = []
for d in ("/workspace", "/tmp"):
    fd = os.open(d, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    held.append(fd)
# the locked descriptions and a socket's own end, queued on that socket: a cycle no
# process holds, which only the kernel's collector (not every runtime has one) ends
a, b = socket.socketpair()
b.sendmsg([b"x"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [a.fileno(), *held]))])
a.close(); b.close()
for fd in held:
    os.close(fd)
print("planted")
""",
    "working directory and environment": """
import os
os.chdir("/tmp"); os.environ["EVIL"] = "1"; os.putenv("HOME", "/tmp")
open("/workspace/.bashrc", "w").write("cd /tmp; export EVIL=1")
open("/workspace/sitecustomize.py", "w").write("import os; os.environ['EVIL'] = '1'")
print("planted")
""",
}
#: Attacks whose container is discarded rather than reset.
DISCARDED = {"inode exhaustion": "unverified"}
#: Attacks whose container gVisor's reset cannot verify: gVisor keeps the socket cycle,
#: listed as a unix socket, and the locks on the workspace and /tmp (a reset's lock probe
#: finds them). Under runc the kernel's collector ends the cycle, and with it the locks,
#: a few milliseconds after A's exit: before the reset or during it (then discarded).
DISCARDED_UNDER_GVISOR = {"locks in flight": "unverified"}
RACES_THE_COLLECTOR = {"locks in flight"}
#: Attacks a reusing gVisor sandbox refuses outright.
REFUSED_UNDER_GVISOR = {"SysV shm, sem and msg", "POSIX message queue"}


#: The judge's room as a test sees it: its mode and owner, then every path in it.
LIST_ROOM = ("import os; s = os.stat('/judge'); print('%o' % (s.st_mode & 0o7777), s.st_uid); "
             "[print(os.path.join(p, n)) for p, ds, fs in sorted(os.walk('/judge')) "
             "for n in sorted(ds + fs)]")


def observe(sandbox: DockerSandbox) -> dict[str, Any]:
    """Run B's observer as the candidate; what it saw."""
    result = sandbox.exec(Command(["python3", "-c", OBSERVE], timeout_s=60))
    assert result.exit_code == 0, result.stderr.decode()
    seen: dict[str, Any] = json.loads(result.stdout)
    return seen


@pytest.fixture(scope="session")
def fresh_view(docker_client: Any) -> dict[str, dict[str, Any]]:
    """Run B in a fresh reusable sandbox, per runtime (computed once)."""
    return {}


def fresh(pool: WarmPool, reusing: Profile, views: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """What B sees in a fresh sandbox of ``reusing`` (the pool's container, first run)."""
    if reusing.runtime not in views:
        other = WarmPool(pool.factory, [(reusing, 1)])
        try:
            other.fill()
            with other.acquire(reusing, run_id="fresh-view") as sandbox:
                assert sandbox.reused.run == 1
                views[str(reusing.runtime)] = observe(sandbox)
        finally:
            other.close()
    return views[str(reusing.runtime)]


@pytest.mark.parametrize("attack", ATTACKS)
def test_run_b_sees_nothing_of_run_a(reuse_pool: WarmPool, reusing: Profile, runtime: str,
                                     attack: str, fresh_view: dict[str, dict[str, Any]]) -> None:
    """A plants its attack; after the reset B sees exactly what it sees in a fresh sandbox
    (or the container was discarded, as that attack expects, and B ran in a fresh one)."""
    clean = fresh(reuse_pool, reusing, fresh_view)
    assert clean["processes"] == 0 and clean["/workspace"] == [] and clean["inodes"] == "ok"
    assert clean["mq"] in ("ENOENT", "EPERM") and clean["abstract"] == "ECONNREFUSED"

    with reuse_pool.acquire(reusing, run_id="run-a") as a:
        planted = a.exec(Command(["python3", "-c", ATTACKS[attack]], timeout_s=60))
        expected = "refused" if (runtime == "runsc" and attack in REFUSED_UNDER_GVISOR) \
            else "planted"
        assert planted.stdout.decode().strip() == expected, planted.stderr.decode()
        first = a.id
    discarded = DISCARDED.get(attack) or (DISCARDED_UNDER_GVISOR.get(attack)
                                          if runtime == "runsc" else None)
    stats = reuse_pool.stats()[0]
    if runtime != "runsc" and attack in RACES_THE_COLLECTOR and stats.discards:
        discarded = "unverified"
    assert dict(stats.discards) == ({discarded: 1} if discarded else {})

    with reuse_pool.acquire(reusing, run_id="run-b") as b:
        assert (b.id == first) == (discarded is None)
        assert b.reused.run == (1 if discarded else 2)
        assert observe(b) == clean


def test_the_judges_room_is_emptied_and_closed_again(reuse_pool: WarmPool,
                                                     reusing: Profile) -> None:
    """A's tests (as the judge) fill the clean room and, run by the candidate's code,
    open it to everyone; B's tests find the room as a fresh sandbox has it."""
    look = CodeExecution(validator_key="t", target="file:s", target_path="s.py",
                         test_command=f"python3 -c {LIST_ROOM!r}; echo '1 passed'")
    leave = dataclasses.replace(look, test_command="mkdir -p /judge/tests/x && echo left > "
                                "/judge/tests/x/y && echo left > /judge/.dot && "
                                "chmod 777 /judge && echo '1 passed'")
    plan = Plan(files=(SeedFile("s.py", "print(1)"),), test_files=(SeedFile("t.sh", ""),),
                tests=(leave,), deliverables=("s.py",))
    with reuse_pool.acquire(reusing, run_id="judge-a") as a:
        assert plans.run_plan(a, plan).tests[0].result.stdout.endswith(b"1 passed\n")
        first = a.id
    views = []
    for run_id in ("judge-b", "judge-fresh"):
        with reuse_pool.acquire(reusing, run_id=run_id) as b:
            views.append((b.id, text(plans.run_plan(b, dataclasses.replace(plan, tests=(look,)))
                                      .tests[0].result.stdout)))
        if run_id == "judge-b":
            reuse_pool.close()  # the next take is a cold, fresh sandbox
    (reused_id, reused), (fresh_id, fresh_test) = views
    assert reused_id == first and fresh_id != first
    assert reused == fresh_test and reused.startswith("700 65532\n")
    assert "/judge/.dot" not in reused and "/judge/tests/x" not in reused
