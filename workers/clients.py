"""The clients a worker node's parts open: the Docker engine's, Redis's (through the one
connection factory, :mod:`tasks.redis_connection`), and where the heartbeat file is."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from .settings import Settings


def docker_client(settings: Settings, timeout: float = 60) -> Any:
    """A docker SDK client for the engine the settings name (``timeout``: per request, s)."""
    import docker

    if settings.docker_url:
        return docker.DockerClient(base_url=settings.docker_url,
                                   version=settings.docker_api_version, timeout=timeout)
    return docker.from_env(version=settings.docker_api_version, timeout=timeout)


def redis_client(settings: Settings) -> Any:
    """A Redis client whose connections are named by the worker's id (``CLIENT LIST``
    says which node holds which)."""
    from evalfleet.tasks.redis_connection import connect

    return connect(settings.redis_url, health_check_interval=30, socket_keepalive=True,
                   client_name=settings.worker_id)


def heartbeat_path(settings: Settings) -> Path:
    return settings.heartbeat_file or Path(tempfile.gettempdir()) / "evalfleet-worker.heartbeat"
