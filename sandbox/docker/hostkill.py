"""Stopping a candidate from the host, which a candidate cannot race.

Inside the sandbox the stopper runs as the candidate's uid (it has no capability to signal
anyone else), so a candidate that kills its own uid in a loop can kill the stopper first.
When the worker shares the host's PID namespace and may signal the candidate's uid (a worker
running as root on the engine's host), it kills the candidate's processes directly by host
pid. Each pid is checked to belong to this container (its cgroup names the container id)
before it is signalled, so a pid from another namespace or a reused pid is never touched.
A worker without that view (say, in a container of its own) simply does nothing here.
"""

from __future__ import annotations

import contextlib
import os
import signal
from typing import Any

import docker.errors


def host_kill(container: Any, user: str) -> int:
    """SIGKILL every process of ``user``'s uid in ``container``; returns how many were hit."""
    uid = user.split(":")[0]
    try:
        rows = container.top(ps_args="-o pid,uid").get("Processes") or []
    except (docker.errors.DockerException, OSError):
        return 0
    hit = 0
    for row in rows:
        if len(row) >= 2 and row[1] == uid and row[0].isdigit() and _ours(row[0], container.id):
            with contextlib.suppress(OSError):
                os.kill(int(row[0]), signal.SIGKILL)
                hit += 1
    return hit


def _ours(pid: str, container_id: str) -> bool:
    """Whether host pid ``pid`` runs in the container (its cgroup path names the id)."""
    try:
        with open(f"/proc/{pid}/cgroup", encoding="utf-8") as cgroup:
            return container_id in cgroup.read()
    except OSError:
        return False
