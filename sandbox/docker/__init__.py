"""The Docker driver: hardened containers, a warm pool and a reaper."""

from __future__ import annotations

from sandbox.docker.driver import DockerSandbox
from sandbox.docker.factory import DockerFactory
from sandbox.docker.pool import PoolStats, WarmPool
from sandbox.docker.reaper import Reaped, Reaper

__all__ = ["DockerFactory", "DockerSandbox", "PoolStats", "Reaped", "Reaper", "WarmPool"]
