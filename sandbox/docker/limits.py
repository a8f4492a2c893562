"""A :class:`~sandbox.profile.Profile` as docker SDK ``containers.create`` arguments.

Hardened by default (docs/operations.md, "Security"): no network, every capability dropped,
``no-new-privileges``, Docker's seccomp profile with ``prlimit`` on other processes refused
(:mod:`sandbox.docker.seccomp`), read-only root, pids / memory (= swap) / CPU limits,
ulimits ``nofile``, ``fsize`` and ``core=0``, size-capped tmpfs workspace and ``/tmp``, an
empty environment besides the profile's, and the labels the reaper reads.

The main process is either the image's ``evalfleet-supervisor`` (pid 1, uid 0 in the
container with only :data:`SUPERVISOR_CAPS`, driven over attached stdin;
:mod:`sandbox.docker.channel`), which starts every step as its own non-root uid, or, for an
image without one, a keep-alive as the non-root ``keeper_user`` under Docker's init, driven
by ``exec``.

The profile's ``runtime`` picks the engine's OCI runtime (``None``: the engine's default).
Under gVisor the host's pids cgroup counts the sandbox kernel's threads, not the
candidate's processes: the limit a candidate meets is ``RLIMIT_NPROC`` (the ``nproc``
ulimit, which gVisor's kernel counts per uid inside the sandbox), and the cgroup keeps a
ceiling of :func:`host_pids` for the whole sandbox. (Under runc ``nproc`` would count the
uid's processes across the whole host, so there the pids cgroup is the limit.)
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import docker.types

from evalfleet.sandbox import room
from evalfleet.sandbox.docker import seccomp
from evalfleet.sandbox.docker.labels import (
    LABEL_CREATED,
    LABEL_DEADLINE,
    LABEL_POOL,
    LABEL_PROFILE,
    LABEL_RUN,
    LABEL_WORKER,
)
from evalfleet.sandbox.profile import Profile

#: The container's main process without a supervisor: as the keeper user, reads its stdin
#: until the worker hangs up (:mod:`sandbox.docker.lifeline`), then exits.
KEEPALIVE = ("sh", "-c", "while read -r _; do :; done")

#: What the supervisor keeps (architecture: trust boundaries): switching each step to its
#: uid, and stopping every process. Everything it starts has none of them.
SUPERVISOR_CAPS = ("KILL", "SETGID", "SETUID")
#: What its container is created with: those, and CAP_SETPCAP, which the supervisor needs
#: once, at start, to empty the bounding set before it sheds CAP_SETPCAP itself.
SUPERVISOR_START_CAPS = (*SUPERVISOR_CAPS, "SETPCAP")
#: Every sandbox's hostname: the same in every run (Docker's default is the container id).
SANDBOX_HOSTNAME = "sandbox"
#: The supervisor's identity in the container (it refuses to start a command as root).
SUPERVISOR_USER = "0:0"
#: Host threads per sandboxed process under gVisor, and the sandbox kernel's own: on the
#: ptrace platform a fork bomb held at 64 processes by RLIMIT_NPROC was seen at up to 3,100
#: host threads (about 45 each, through ``docker exec``; 18 each through the supervisor),
#: and the sandbox kernel dies (exit 2, an infra error) when the cgroup refuses it a thread.
#: So the ceiling is generous; gVisor nodes need a ``kernel.pid_max`` to match
#: (docs/operations.md, "Isolation"). Through ``docker exec`` (an image without the
#: supervisor) every process writing to the exec's host-side pipes costs gVisor more
#: threads: up to 70 each were seen, hence twice the ceiling.
GVISOR_THREADS_PER_PROCESS = 64
GVISOR_EXEC_THREADS_PER_PROCESS = 128
GVISOR_BASE_THREADS = 512


@dataclass(frozen=True)
class Ownership:
    """Who a container belongs to and until when (written as labels)."""

    worker: str
    run_id: str
    deadline: float
    """Unix time after which the reaper may remove the container whatever the worker."""
    pooled: bool = False


def labels(profile: Profile, owner: Ownership,
           extra: dict[str, str] | None = None) -> dict[str, str]:
    """The container's labels: the profile's, then ours (ours win)."""
    return {**profile.labels, **(extra or {}),
            LABEL_RUN: owner.run_id, LABEL_WORKER: owner.worker,
            LABEL_CREATED: f"{time.time():.3f}", LABEL_DEADLINE: f"{owner.deadline:.3f}",
            LABEL_PROFILE: profile.name, LABEL_POOL: "1" if owner.pooled else "0"}


def create_kwargs(profile: Profile, owner: Ownership,
                  extra_labels: dict[str, str] | None = None,
                  supervisor: str | None = None, *, gvisor: bool = False,
                  reusable: bool = False) -> dict[str, Any]:
    """Keyword arguments for ``client.containers.create`` (``supervisor``: its path in the
    image, or ``None`` for the keep-alive; ``gvisor``: the profile's runtime is gVisor;
    ``reusable``: the sandbox may serve several runs, its supervisor started
    ``--reusable``, see :mod:`sandbox.docker.reuse`)."""
    confinement = _confinement(profile, gvisor=gvisor, supervised=supervisor is not None)
    return {**_main_process(profile, supervisor, reusable=reusable), **confinement,
            "image": profile.image,
            "environment": dict(profile.env),
            "working_dir": profile.workdir,
            "labels": labels(profile, owner, extra_labels),
            "hostname": SANDBOX_HOSTNAME,
            "runtime": profile.runtime,
            "tty": False}


#: The supervisor's argument for a sandbox that may serve several runs: it records the
#: sandbox's state at its start, which every reset restores and verifies.
REUSABLE_ARG = "--reusable"


def _main_process(profile: Profile, supervisor: str | None, *,
                  reusable: bool = False) -> dict[str, Any]:
    """The supervisor as pid 1 (root with :data:`SUPERVISOR_CAPS`, its own init, stdin open,
    no log of its stream), or the keep-alive under Docker's init (stdin open).

    Either one's stdin is closed when the worker hangs up (``StdinOnce``, which docker-py
    asks for only on a create that is not detached; the container is started all the
    same), so it exits and its container stops by itself: at a removal
    (:func:`sandbox.docker.removal.hang_up`), and when a worker dies."""
    hardening = profile.hardening
    if supervisor is None:
        return {"command": list(KEEPALIVE), "user": hardening.keeper_user,
                "init": hardening.init, "stdin_open": True, "detach": False,
                "cap_add": list(hardening.cap_add) or None}
    command = [supervisor, *([REUSABLE_ARG] if reusable else []), *room_parts(profile)]
    return {"command": command, "user": SUPERVISOR_USER, "init": False,
            "stdin_open": True, "detach": False,  # docker-py: StdinOnce (see above)
            "log_config": docker.types.LogConfig(type="none"),
            "cap_add": sorted({*hardening.cap_add, *SUPERVISOR_START_CAPS})}


#: The supervisor's argument for directories it makes at the start, as a uid.
DIRS_AS_ARG = "--dirs-as"


def room_parts(profile: Profile) -> list[str]:
    """The supervisor's arguments that make the judge's room's parts at the start, as the
    judge (whose uid and gid must be one number, as the supervisor acts as a uid): no
    request forks ``mkdir`` for them, and a reused sandbox's resets keep them."""
    uid, _, gid = profile.hardening.judge_user.partition(":")
    return [DIRS_AS_ARG, uid, *room.PARTS] if (gid or uid) == uid else []


def _confinement(profile: Profile, *, gvisor: bool, supervised: bool) -> dict[str, Any]:
    """Network, capabilities dropped, security options, read-only root, limits, mounts.
    Every sandbox of a reusing profile under gVisor refuses lasting IPC objects (see
    :mod:`sandbox.docker.seccomp`), so a run sees the same sandbox, fresh or reused."""
    limits, hardening = profile.limits, profile.hardening
    pids = host_pids(limits.pids, supervised=supervised) if gvisor else limits.pids
    return {
        "network_mode": hardening.network_mode,
        "cap_drop": list(hardening.cap_drop),
        "security_opt": security_opt(profile, refuse_ipc=gvisor and profile.reusable),
        "read_only": hardening.read_only,
        "pids_limit": pids,
        "mem_limit": limits.memory_bytes,
        "memswap_limit": limits.memory_bytes,
        "nano_cpus": int(limits.cpus * 1e9),
        "ulimits": ulimits(profile, gvisor=gvisor),
        "tmpfs": tmpfs(profile),
    }


def host_pids(pids: int, *, supervised: bool = True) -> int:
    """The host pids cgroup ceiling of a gVisor sandbox whose processes RLIMIT_NPROC caps
    at ``pids`` per uid (see the module docstring)."""
    per = GVISOR_THREADS_PER_PROCESS if supervised else GVISOR_EXEC_THREADS_PER_PROCESS
    return pids * per + GVISOR_BASE_THREADS


def security_opt(profile: Profile, *, refuse_ipc: bool = False) -> list[str]:
    """The profile's options, plus evalfleet's seccomp profile unless it names one (the
    variant refusing lasting IPC objects with ``refuse_ipc``: see :mod:`sandbox.docker.seccomp`)."""
    options = list(profile.hardening.security_opt)
    if not any(option.startswith("seccomp") for option in options):
        options.append(seccomp.security_opt(refuse_ipc=refuse_ipc))
    return options


def ulimits(profile: Profile, *, gvisor: bool = False) -> list[docker.types.Ulimit]:
    """``nofile``, ``fsize`` (in bytes: Docker hands values to setrlimit as is), ``core=0``
    and, under gVisor, ``nproc`` = the pids limit (see the module docstring)."""
    limits = profile.limits
    found = [docker.types.Ulimit(name="nofile", soft=limits.nofile, hard=limits.nofile),
             docker.types.Ulimit(name="fsize", soft=limits.fsize_bytes, hard=limits.fsize_bytes),
             docker.types.Ulimit(name="core", soft=0, hard=0)]
    if gvisor:
        found.append(docker.types.Ulimit(name="nproc", soft=limits.pids, hard=limits.pids))
    return found


def tmpfs(profile: Profile) -> dict[str, str]:
    """Size-capped tmpfs mounts: the workspace (exec allowed, no setuid), ``/tmp``, and the
    judge's room (:mod:`sandbox.room`: owned by the judge's uid, mode 0700)."""
    limits = profile.limits
    inodes = max(limits.workspace_bytes // 1024, 4096)  # 65,536 for 64 MiB
    uid, _, gid = profile.hardening.judge_user.partition(":")
    return {
        profile.workdir: f"rw,exec,nosuid,nodev,size={limits.workspace_bytes},"
                         f"nr_inodes={inodes},mode=1777",
        "/tmp": f"rw,noexec,nosuid,nodev,size={limits.tmp_bytes},mode=1777",
        room.ROOM: f"rw,exec,nosuid,nodev,size={limits.room_bytes},mode=0700,"
                   f"uid={uid},gid={gid or uid}",
    }
