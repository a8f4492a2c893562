"""The Docker driver: hardened containers, a warm pool and a reaper."""

from __future__ import annotations

from evalfleet.sandbox.docker.driver import DockerSandbox
from evalfleet.sandbox.docker.factory import DockerFactory
from evalfleet.sandbox.docker.pool import PoolStats, WarmPool
from evalfleet.sandbox.docker.reaper import Reaped, Reaper

__all__ = ["DockerFactory", "DockerSandbox", "PoolStats", "Reaped", "Reaper", "WarmPool"]
