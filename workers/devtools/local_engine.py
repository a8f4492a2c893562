"""A sandbox engine (``deploy/engine``) started as a container on the local Docker engine.

The worker pod's own Docker engine, outside Kubernetes: used by the deploy tests and the
benchmarks (``bench/sidecar.py``) to run sandboxes inside it. The socket directory is
a host directory, so a worker process on the host reaches the engine at ``url``. Whoever starts
one removes it (``remove``): the container, its data volume and every sandbox in it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .local_fleet import wait_until

IMAGE = "evalfleet/engine:latest"
#: What ``--privileged`` grants, spelled out, minus ``CAP_SYS_RESOURCE``: Docker's privileged
#: mode asks for every capability it knows and fails on a host whose bounding set lacks one
#: (a nested container, such as this project's machine). The engine remounts ``/proc/sys`` and
#: the cgroups writable itself (the API has no ``systempaths=unconfined``). docker-compose.yml's
#: sidecar-engine has the same (tests/integration/deploy/test_static.py checks they agree).
PRIVILEGES: dict[str, Any] = {
    "cap_add": ["ALL"],
    "cap_drop": ["SYS_RESOURCE"],
    "security_opt": ["seccomp=unconfined", "apparmor=unconfined"],
    "device_cgroup_rules": ["a *:* rwm"],
}


@dataclass
class LocalEngine:
    """One engine container; its socket is ``<socket_dir>/docker.sock`` on the host."""

    client: Any
    """A docker SDK client for the local engine (the one the engine container runs on)."""
    labels: dict[str, str]
    preload: Path | None = None
    """A directory of ``docker save`` archives the engine loads at start."""
    environment: dict[str, str] = field(default_factory=dict)
    image: str = IMAGE
    socket_dir: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(
        prefix="evalfleet-engine-")))
    container: Any = None

    @property
    def url(self) -> str:
        return f"unix://{self.socket_dir}/docker.sock"

    def start(self, timeout: float = 120) -> LocalEngine:
        """Run the engine (restarted by Docker if it dies) and wait until it is ready.

        Raises:
            TimeoutError: not ready within ``timeout`` (its log is in the message).
        """
        volumes = {str(self.socket_dir): {"bind": "/engine", "mode": "rw"}}
        if self.preload is not None:
            volumes[str(self.preload)] = {"bind": "/preload", "mode": "ro"}
        self.container = self.client.containers.run(
            self.image, detach=True, labels=self.labels, volumes=volumes,
            environment=self.environment, restart_policy={"Name": "unless-stopped"},
            **PRIVILEGES)
        self.wait_ready(timeout)
        return self

    def health(self) -> str:
        self.container.reload()
        return str(self.container.attrs["State"].get("Health", {}).get("Status", ""))

    def wait_ready(self, timeout: float = 120) -> None:
        """Wait until the engine's health check passes.

        Raises:
            TimeoutError: not within ``timeout`` (the engine's log is in the message).
        """
        try:
            wait_until(lambda: self.health() == "healthy", timeout, "engine not ready")
        except TimeoutError as error:
            log = self.container.logs(tail=30).decode(errors="replace")
            raise TimeoutError(f"{error}; its log:\n{log}") from error

    def inner(self, timeout: float = 60) -> Any:
        """A docker SDK client for the engine inside."""
        import docker

        return docker.DockerClient(base_url=self.url, version="1.41", timeout=timeout)

    def crash(self) -> None:
        """SIGKILL the engine container's main process, as the kernel's OOM killer or a crash
        would (``docker kill`` would count as a deliberate stop: no restart)."""
        self.container.reload()
        os.kill(int(self.container.attrs["State"]["Pid"]), signal.SIGKILL)

    def restarts(self) -> int:
        self.container.reload()
        return int(self.container.attrs["RestartCount"])

    def remove(self) -> None:
        """Remove the container and its data volume (every sandbox goes with it)."""
        if self.container is not None:
            with contextlib.suppress(Exception):  # gone already
                self.container.remove(force=True, v=True)
        for leftover in self.socket_dir.iterdir():
            leftover.unlink()
        self.socket_dir.rmdir()


def wait_for_restart(engine: LocalEngine, before: int, timeout: float = 60) -> float:
    """Seconds until the engine restarted after ``before`` restarts and is ready again."""
    started = time.monotonic()
    wait_until(lambda: engine.restarts() > before, timeout, "engine not restarted")
    engine.wait_ready(timeout)
    return time.monotonic() - started
