"""One started container as the driver reaches it: which transport carries a request, the
wall deadline, engine errors classified, and the container's own counters and removal.

:class:`~sandbox.docker.driver.DockerSandbox` speaks the sandbox contract in terms of
requests; this is where a request meets the container. A request as the supervisor's uid
goes through the supervisor (:mod:`sandbox.docker.channel`), any other through
``docker exec`` (:mod:`sandbox.docker.stream`). A host timer kills the container at the
profile's wall deadline; from then on every request answers ``None``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import docker.errors

from sandbox.docker import scripts
from sandbox.docker.channel import Channel, ChannelClosed
from sandbox.docker.failure import classify
from sandbox.docker.stream import ExecRequest, RawExec, run_exec
from sandbox.docker.usage import parse_inside, read_usage
from sandbox.errors import SandboxError, SandboxUnavailable
from sandbox.profile import Profile

log = logging.getLogger(__name__)

#: Timeout of the driver's own steps (stop, capture, listing, OOM counter, usage).
INTERNAL_TIMEOUT_S = 30.0
#: What a request past the wall deadline reports.
PAST_DEADLINE = RawExec(None, b"", b"deadline exceeded", False, False, True, 0.0)


def nothing() -> None:
    """An ``on_limit`` for the driver's own scripts: let them finish or time out."""


def internal_request(profile: Profile, argv: Sequence[str], *, stdin: bytes = b"",
                     cap: int = 1 << 20, stop_first: bool = False) -> ExecRequest:
    """A driver step as the candidate's uid (so it reads what they can), in the workspace."""
    return ExecRequest(argv=argv, user=profile.hardening.user, workdir=profile.workdir,
                       env={}, stdin=stdin, timeout_s=INTERNAL_TIMEOUT_S, cap=cap,
                       stop_first=stop_first)


class Conduit:
    """The container, its supervisor (if any) and its wall deadline."""

    def __init__(self, client: Any, container: Any, profile: Profile,
                 channel: Channel | None = None) -> None:
        self.client, self.container, self.profile, self.channel = (
            client, container, profile, channel)
        self._oom_seen = 0
        self._expired = threading.Event()
        self._closed = False
        self._timer = threading.Timer(profile.limits.wall_timeout_s, self._expire)
        self._timer.daemon = True
        self._timer.start()

    @property
    def id(self) -> str:
        """The container id."""
        return str(self.container.id)

    @property
    def deadline_exceeded(self) -> bool:
        """Whether the wall deadline killed the container."""
        return self._expired.is_set()

    def run(self, request: ExecRequest, on_limit: Callable[[], None]) -> RawExec | None:
        """The request through the supervisor (same uid) or ``exec``; ``None`` past the
        deadline.

        Raises:
            SandboxUnavailable: the engine, the container or its supervisor is gone.
        """
        if self.deadline_exceeded:
            return None
        try:
            if self.channel is not None and request.user == self.profile.hardening.user:
                return self.channel.run(request, on_limit)
            return run_exec(self.client.api, self.id, request, on_limit)
        except ChannelClosed as error:
            if self.deadline_exceeded:
                return None
            raise SandboxUnavailable(f"supervisor: {error}", sandbox_id=self.id) from error
        except (docker.errors.DockerException, OSError) as error:
            if self.deadline_exceeded:
                return None
            raise classify(error, what="exec", sandbox_id=self.id) from error

    def oom_happened(self) -> bool:
        """Whether the memory cgroup's OOM-kill counter moved since we last looked."""
        hardening = self.profile.hardening
        user = hardening.user if self.channel is not None else hardening.keeper_user
        request = ExecRequest(argv=("sh", "-c", scripts.OOM_COUNT), user=user, workdir="/",
                              env={}, stdin=b"", timeout_s=INTERNAL_TIMEOUT_S, cap=4096)
        raw = self.run(request, nothing)
        fields = raw.stdout.split() if raw else []
        count = int(fields[1]) if len(fields) > 1 and fields[1].isdigit() else self._oom_seen
        happened, self._oom_seen = count > self._oom_seen, max(count, self._oom_seen)
        return happened

    def usage(self) -> Mapping[str, float]:
        """Peak memory and CPU time from the container's cgroup: the host's when visible,
        else as the supervisor reads it inside; never raises."""
        found = read_usage(self.id)
        if found or self.channel is None:
            return found
        request = internal_request(self.profile, ("sh", "-c", scripts.USAGE), cap=4096)
        try:
            raw = self.run(request, nothing)
        except SandboxError as error:
            log.info("usage of %s not readable: %s", self.id[:12], error)
            return {}
        return parse_inside(raw.stdout) if raw else {}

    def detach_networks(self) -> None:
        """Disconnect the container from every network (a pack with egress).

        Raises:
            SandboxUnavailable: the engine or the container is gone.
        """
        if self.profile.hardening.network_mode == "none":
            return
        try:
            self.container.reload()
            names = list(self.container.attrs["NetworkSettings"]["Networks"])
            for name in names:
                self.client.api.disconnect_container_from_network(self.id, name, force=True)
        except (docker.errors.DockerException, OSError) as error:
            raise classify(error, what="network disconnect", sandbox_id=self.id) from error

    def close(self) -> None:
        """Hang up and remove the container (force); never raises."""
        self._timer.cancel()
        if self._closed:
            return
        self._closed = True
        if self.channel is not None:
            self.channel.close()
        try:
            self.container.remove(force=True)
        except docker.errors.NotFound:
            pass
        except Exception as error:  # close must not raise; the reaper will retry
            log.warning("could not remove sandbox %s: %s", self.id[:12], error)

    def _expire(self) -> None:
        """The wall deadline: kill the container (``close`` removes it)."""
        self._expired.set()
        try:
            self.container.kill()
        except Exception as error:  # already gone or stopping: nothing left to kill
            log.info("deadline kill of %s: %s", self.id[:12], error)
