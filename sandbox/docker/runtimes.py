"""The OCI runtimes an engine offers, and which of them is gVisor.

``docker info`` lists the runtimes the engine was told about (``runc`` always; ``runsc``
once gVisor is registered in ``/etc/docker/daemon.json``). A runtime is gVisor when its
binary is ``runsc``, whatever name the operator registered it under. The driver needs to
know because a gVisor sandbox behaves differently from the host's side: its processes are
the sandbox kernel's threads, so the pids cgroup and the cgroup usage counters describe
the sandbox kernel, not the candidate (see :mod:`sandbox.docker.limits`).
"""

from __future__ import annotations

import posixpath
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import docker.errors

from evalfleet.sandbox.docker.failure import classify

#: The binary of gVisor's OCI runtime.
GVISOR_BINARY = "runsc"
#: The runtime every Docker engine has.
RUNC = "runc"
#: Key of the engine's default runtime in :func:`runtime_paths` (no runtime is so named).
DEFAULT = "<default>"


@dataclass(frozen=True)
class RuntimeInfo:
    """One runtime the engine lists."""

    name: str
    path: str
    args: tuple[str, ...] = ()

    @property
    def gvisor(self) -> bool:
        """Whether it is gVisor's ``runsc``."""
        return is_gvisor(self.path)

    @property
    def networkless(self) -> bool:
        """Whether it runs every sandbox without a network (``runsc --network=none``): a
        profile that allows network cannot use it."""
        return "--network=none" in self.args


def offered(info: Mapping[str, Any]) -> dict[str, RuntimeInfo]:
    """The runtimes of ``docker info``, by name."""
    found = info.get("Runtimes") or {}
    return {name: RuntimeInfo(name, str((spec or {}).get("path") or name),
                              tuple((spec or {}).get("runtimeArgs") or ()))
            for name, spec in found.items()}


def runtime_paths(info: Mapping[str, Any]) -> dict[str, str]:
    """Runtime name → binary path, from ``docker info``'s ``Runtimes``; the engine's
    default runtime is also under the key ``None``'s stand-in :data:`DEFAULT`."""
    found = info.get("Runtimes") or {}
    paths = {name: str((spec or {}).get("path") or name) for name, spec in found.items()}
    default = str(info.get("DefaultRuntime") or RUNC)
    paths[DEFAULT] = paths.get(default, default)
    return paths


def is_gvisor(path: str) -> bool:
    """Whether a runtime binary is gVisor's."""
    return posixpath.basename(path) == GVISOR_BINARY


class Runtimes:
    """What the engine offers, asked once per process (the engine's list is read at start:
    registering a runtime takes a reload of dockerd and a restart of the worker)."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self._paths: dict[str, str] | None = None
        self._lock = threading.Lock()

    def paths(self) -> dict[str, str]:
        """Runtime name → binary path (and :data:`DEFAULT` → the default's).

        Raises:
            SandboxUnavailable: the engine is not there.
        """
        with self._lock:
            if self._paths is None:
                try:
                    self._paths = runtime_paths(self.client.info())
                except (docker.errors.DockerException, OSError) as error:
                    raise classify(error, what="docker info") from error
            return dict(self._paths)

    def gvisor(self, name: str | None) -> bool:
        """Whether sandboxes on runtime ``name`` (``None``: the engine's default) run under
        gVisor.

        Raises:
            SandboxUnavailable: the engine is not there.
        """
        key = DEFAULT if name is None else name
        return is_gvisor(self.paths().get(key, key))

    def name(self, name: str | None) -> str:
        """The runtime's name as the engine knows it (``None``: the engine's default).

        Raises:
            SandboxUnavailable: the engine is not there.
        """
        if name is not None:
            return name
        default = self.paths()[DEFAULT]
        return next((n for n, path in self.paths().items()
                     if n != DEFAULT and path == default), default)

    def offered(self) -> list[str]:
        """The runtimes the engine lists, by name.

        Raises:
            SandboxUnavailable: the engine is not there.
        """
        return sorted(name for name in self.paths() if name != DEFAULT)
