"""The Docker driver: hardened containers, a warm pool and a reaper."""

from __future__ import annotations

from sandbox.docker.driver import DockerSandbox
from sandbox.docker.factory import DockerFactory

__all__ = ["DockerFactory", "DockerSandbox"]
