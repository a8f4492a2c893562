"""The sandbox's seccomp profile: Docker's default, except that ``prlimit64`` is self-only
and ``io_uring`` is refused.

``seccomp.json`` beside this module is Docker 20.10's default profile (moby
``profiles/seccomp/default.json`` at v20.10.24) with two changes:

* ``prlimit64`` left the unconditional allow list and is allowed only when its first
  argument, the pid, is 0, i.e. on the calling process itself. That is what glibc's
  ``getrlimit``/``setrlimit`` (and Python's ``resource`` module) issue, so a process still
  reads and sets its own limits. With every capability dropped, the kernel still lets a
  process change the limits of any other process of the same uid: under Docker's default
  profile a candidate could kill a driver step that runs as its uid (``RLIMIT_CPU`` = 0 on
  it) or starve it of file descriptors. Nothing a candidate legitimately needs goes through
  ``prlimit64`` on another pid.
* ``io_uring_setup``, ``io_uring_enter`` and ``io_uring_register`` left the allow list
  (:data:`IO_URING`), as they did in Docker 25's and containerd 2.0's defaults (moby
  #46762): io_uring is the largest source of the Linux kernel exploits that broke out of
  containers in Google's kCTF, and its operations bypass seccomp's view of the syscalls
  they stand for. Under runc the candidate talks to the host kernel, so one such bug is an
  escape, and an escaped candidate holds the engine and forges any verdict. Programs that
  try io_uring (libuv, Tokio, liburing users) fall back to ordinary syscalls on the error.

A refused call falls to the profile's default action, ``SCMP_ACT_ERRNO``, which the
runtime turns into EPERM.

Docker's API takes a custom profile as the JSON text itself in ``HostConfig.SecurityOpt``
(``seccomp=<json>``), which is what the docker CLI sends for ``--security-opt
seccomp=file.json``; :func:`security_opt` gives that option.

A variant refuses creating IPC objects that outlive their process (:data:`IPC_CREATORS`:
POSIX message queues and SysV shared memory, message queues and semaphores): the sandboxes
of a reusing profile under gVisor get it, because gVisor lists neither kind (no
``/proc/sysvipc``, no mqueue file system), so its supervisor could never verify that a reset
left none behind (:mod:`sandbox.docker.reuse`). Under runc they are listed and removed.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

#: Docker 20.10's default seccomp profile with ``prlimit64`` limited to pid 0 and no
#: ``io_uring``.
PROFILE_PATH: Path = Path(__file__).with_name("seccomp.json")
#: The io_uring system calls the profile refuses (Docker's default since 25.0 does too).
IO_URING = frozenset({"io_uring_setup", "io_uring_enter", "io_uring_register"})


#: System calls that create IPC objects outliving every process (refused by the variant).
IPC_CREATORS = frozenset({"mq_open", "shmget", "msgget", "semget"})


@functools.cache
def security_opt(*, refuse_ipc: bool = False) -> str:
    """``seccomp=<profile JSON>`` for a container's ``security_opt`` (read once);
    ``refuse_ipc``: the variant where :data:`IPC_CREATORS` get the default EPERM."""
    profile = json.loads(PROFILE_PATH.read_text(encoding="utf-8"))
    if refuse_ipc:
        for rule in profile["syscalls"]:
            rule["names"] = [name for name in rule["names"] if name not in IPC_CREATORS]
        profile["syscalls"] = [rule for rule in profile["syscalls"] if rule["names"]]
    return "seccomp=" + json.dumps(profile, separators=(",", ":"))
