"""A :class:`~sandbox.profile.Profile` as docker SDK ``containers.create`` arguments.

Hardened by default (fleet-anchors §3.2): no network, every capability dropped,
``no-new-privileges``, Docker's seccomp profile with ``prlimit`` on other processes refused
(:mod:`sandbox.docker.seccomp`), read-only root, pids / memory (= swap) / CPU limits,
ulimits ``nofile``, ``fsize`` and ``core=0``, size-capped tmpfs workspace and ``/tmp``, an
empty environment besides the profile's, and the labels the reaper reads.

The main process is either the image's ``evalfleet-supervisor`` (pid 1, as the candidate's
uid, driven over attached stdin; :mod:`sandbox.docker.channel`) or, for an image without
one, a keep-alive as the non-root ``keeper_user`` under Docker's init, driven by ``exec``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import docker.types

from sandbox.docker import seccomp
from sandbox.profile import Profile

#: The container's main process: sleeps as the keeper user until the sandbox is removed.
KEEPALIVE = ("sleep", "2147483647")

LABEL_PREFIX = "evalfleet."
LABEL_RUN = "evalfleet.run_id"
LABEL_WORKER = "evalfleet.worker"
LABEL_CREATED = "evalfleet.created"
LABEL_DEADLINE = "evalfleet.deadline"
LABEL_PROFILE = "evalfleet.profile"
LABEL_POOL = "evalfleet.pool"
#: Run id of a warm container nobody has taken yet (labels cannot change after create).
WARM_RUN_ID = "warm"


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
                  supervisor: str | None = None) -> dict[str, Any]:
    """Keyword arguments for ``client.containers.create`` (``supervisor``: its path in the
    image, or ``None`` for the keep-alive)."""
    return {**_main_process(profile, supervisor), **_confinement(profile),
            "image": profile.image,
            "environment": dict(profile.env),
            "working_dir": profile.workdir,
            "labels": labels(profile, owner, extra_labels),
            "detach": True,
            "tty": False}


def _main_process(profile: Profile, supervisor: str | None) -> dict[str, Any]:
    """The supervisor as pid 1 (its own init, stdin open, no log of its stream), or the
    keep-alive under Docker's init."""
    hardening = profile.hardening
    if supervisor is None:
        return {"command": list(KEEPALIVE), "user": hardening.keeper_user,
                "init": hardening.init, "stdin_open": False}
    return {"command": [supervisor], "user": hardening.user, "init": False,
            "stdin_open": True, "log_config": docker.types.LogConfig(type="none")}


def _confinement(profile: Profile) -> dict[str, Any]:
    """Network, capabilities, security options, read-only root, limits and mounts."""
    limits, hardening = profile.limits, profile.hardening
    return {
        "network_mode": hardening.network_mode,
        "cap_drop": list(hardening.cap_drop),
        "cap_add": list(hardening.cap_add) or None,
        "security_opt": security_opt(profile),
        "read_only": hardening.read_only,
        "pids_limit": limits.pids,
        "mem_limit": limits.memory_bytes,
        "memswap_limit": limits.memory_bytes,
        "nano_cpus": int(limits.cpus * 1e9),
        "ulimits": ulimits(profile),
        "tmpfs": tmpfs(profile),
    }


def security_opt(profile: Profile) -> list[str]:
    """The profile's options, plus evalfleet's seccomp profile unless it names one."""
    options = list(profile.hardening.security_opt)
    if not any(option.startswith("seccomp") for option in options):
        options.append(seccomp.security_opt())
    return options


def ulimits(profile: Profile) -> list[docker.types.Ulimit]:
    """``nofile``, ``fsize`` (in bytes: Docker hands values to setrlimit as is) and ``core=0``."""
    limits = profile.limits
    return [docker.types.Ulimit(name="nofile", soft=limits.nofile, hard=limits.nofile),
            docker.types.Ulimit(name="fsize", soft=limits.fsize_bytes, hard=limits.fsize_bytes),
            docker.types.Ulimit(name="core", soft=0, hard=0)]


def tmpfs(profile: Profile) -> dict[str, str]:
    """Size-capped tmpfs mounts: the workspace (exec allowed, no setuid) and ``/tmp``."""
    limits = profile.limits
    inodes = max(limits.workspace_bytes // 1024, 4096)  # 65,536 for 64 MiB
    return {
        profile.workdir: f"rw,exec,nosuid,nodev,size={limits.workspace_bytes},"
                         f"nr_inodes={inodes},mode=1777",
        "/tmp": f"rw,noexec,nosuid,nodev,size={limits.tmp_bytes},mode=1777",
    }
