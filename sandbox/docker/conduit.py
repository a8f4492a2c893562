"""One started container as the driver reaches it: which transport carries a request, the
wall deadline, engine errors classified, and the container's own counters and removal.

:class:`~sandbox.docker.driver.DockerSandbox` speaks the sandbox contract in terms of
requests; this is where a request meets the container. A request as the supervisor's uid
goes through the supervisor (:mod:`sandbox.docker.channel`), any other through
``docker exec`` (:mod:`sandbox.docker.stream`). A host timer ends the container at the
profile's wall deadline (a supervised one is hung up on and stops by itself); from then
on every request answers ``None``.

Every request is stamped here with the image's environment under its own (the supervisor
passes on nothing of its own). A gVisor sandbox that passes its memory limit
is killed whole by the host (its kernel is one process there); that, too, ends the sandbox
for every later request, as the candidate's doing (:attr:`Conduit.ended_by`). The request
in flight learns of it from its stream's end, or, through ``docker exec``, whose stream the
engine may leave open, from the container's lifeline (:attr:`Lifeline.ended
<sandbox.docker.lifeline.Lifeline.ended>`).
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import docker.errors

from evalfleet.sandbox import room
from evalfleet.sandbox.docker import death, removal, scripts
from evalfleet.sandbox.docker.failure import classify
from evalfleet.sandbox.docker.frames import ChannelClosed
from evalfleet.sandbox.docker.lifeline import Lifeline, Line, supervisor
from evalfleet.sandbox.docker.stream import ContainerStopped, ExecRequest, RawExec, run_exec
from evalfleet.sandbox.docker.usage import parse_inside, read_usage
from evalfleet.sandbox.errors import SandboxError, SandboxUnavailable
from evalfleet.sandbox.profile import Profile

log = logging.getLogger(__name__)

#: Timeout of the driver's own steps (stop, capture, listing, OOM counter, usage).
INTERNAL_TIMEOUT_S = 30.0
#: The ``PATH`` the engine gives a process of an image that sets none.
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
#: What a request past the wall deadline reports.
PAST_DEADLINE = RawExec(None, b"", b"deadline exceeded", False, False, True, 0.0)
#: What the request in flight reports when the host killed its gVisor sandbox at the
#: memory limit: SIGKILL, as a process OOM-killed under runc (its output is lost with it).
KILLED_WITH_SANDBOX = RawExec(137, b"", b"", False, False, False, 0.0)
#: How a sandbox can end before it is closed (:attr:`Conduit.ended_by`).
DEADLINE, MEMORY, CANCELLED = "deadline", "memory", "cancelled"
#: Why a gVisor sandbox reports no usage.
GVISOR_USAGE = ("not measured under gVisor: the sandbox's cgroup counts its kernel as well "
                "as the candidate's processes")
#: Why a sandbox reports no usage when neither the host nor the supervisor can read it.
NO_USAGE = "the sandbox's cgroup counters could not be read"


def nothing() -> None:
    """An ``on_limit`` for the driver's own scripts: let them finish or time out."""


def internal_request(profile: Profile, argv: Sequence[str], *, stdin: bytes = b"",
                     cap: int = 1 << 20, stop_first: bool = False) -> ExecRequest:
    """A driver step as the candidate's uid (so it reads what they can), in the workspace,
    its tools found only where the candidate cannot put a program (``trusted_path``:
    :meth:`Conduit.stamp`)."""
    return ExecRequest(argv=argv, user=profile.hardening.user, workdir=profile.workdir,
                       env={}, stdin=stdin, timeout_s=INTERNAL_TIMEOUT_S, cap=cap,
                       stop_first=stop_first, trusted_path=True)


def _maybe_killed(raw: RawExec) -> bool:
    """Whether an exec's end could be its container's death (no status, or a signal's)."""
    return not raw.timed_out and (raw.exit_code is None or raw.exit_code >= 128)


class Conduit:
    """The container, its supervisor (if any), its runtime and its wall deadline."""

    def __init__(self, client: Any, container: Any, profile: Profile,
                 line: Line | None = None, *, base_env: Mapping[str, str] | None = None,
                 gvisor: bool = False) -> None:
        self.client, self.container, self.profile, self.line = client, container, profile, line
        self.channel = supervisor(line)
        self._stopped = line.ended if isinstance(line, Lifeline) else None
        """Set once the container stopped (driven by ``exec``: its lifeline's end)."""
        self.base_env = dict(base_env or {})
        self.gvisor = gvisor
        self.ended_by: str | None = None
        """:data:`DEADLINE`, :data:`MEMORY` or :data:`CANCELLED` once the sandbox ended
        before its close."""
        self.hits: set[str] = set()
        """Limits the run's requests hit: ``timeout``, ``output`` (a cap), ``oom``; a
        reusable sandbox that hit any is removed, not reused (:mod:`sandbox.docker.reuse`)."""
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
        """Whether the wall deadline ended the container."""
        return self._expired.is_set()

    @property
    def ended(self) -> bool:
        """Whether the sandbox ended by a limit (deadline, or a gVisor sandbox's memory)."""
        return self.deadline_exceeded or self.ended_by is not None

    def run(self, request: ExecRequest, on_limit: Callable[[], None],
            then: Sequence[ExecRequest] = ()) -> RawExec | None:
        """The request through the supervisor (as its user) or ``exec``; ``None`` once the
        sandbox has ended by a limit (:attr:`ended`). ``then``: the requests that will
        follow, which a supervisor of protocol 6 queues behind it (see
        :meth:`Channel.run`; ``exec`` ignores them).

        Raises:
            SandboxUnavailable: the engine, the container or its supervisor is gone.
        """
        if self.ended:
            return None
        stamped = self.stamp(request)
        try:
            if self.channel is not None:
                later = tuple(self.stamp(each) for each in then)
                return self._note(self.channel.run(stamped, on_limit, later))
            raw = run_exec(self.client.api, self.id, stamped, on_limit, ended=self._stopped)
        except (ChannelClosed, ContainerStopped) as error:  # the container is gone
            transport = "supervisor" if self.channel is not None else "exec"
            return self._lost(SandboxUnavailable(f"{transport}: {error}", sandbox_id=self.id))
        except (docker.errors.DockerException, OSError) as error:
            return self._lost(classify(error, what="exec", sandbox_id=self.id))
        if _maybe_killed(raw) and (self.ended_by == MEMORY or self.died_of_memory()):
            return KILLED_WITH_SANDBOX  # the exec's stream just ended with its container
        return self._note(raw)

    def _note(self, raw: RawExec) -> RawExec:
        """``raw``, its limits noted in :attr:`hits`."""
        if raw.timed_out:
            self.hits.add("timeout")
        if raw.stdout_truncated or raw.stderr_truncated:
            self.hits.add("output")
        return raw

    def _lost(self, error: SandboxError) -> RawExec | None:
        """The container went away during a request: past the deadline, ``None``; killed
        whole at its memory limit (gVisor), the request was SIGKILLed with it (whichever
        request in flight noticed first); otherwise the engine's or our failure.

        Raises:
            SandboxError: ``error``, when no limit explains the loss.
        """
        if self.deadline_exceeded:
            return None
        if self.ended_by == MEMORY or self.died_of_memory():
            return KILLED_WITH_SANDBOX
        raise error

    def stamp(self, request: ExecRequest) -> ExecRequest:
        """``request`` with the image's environment under its own; for the driver's own
        steps (``trusted_path``), a ``PATH`` without the directories the candidate can
        write (issue 39: with ``/workspace/bin`` on an image's ``PATH``, a planted ``find``
        would answer a listing, a planted ``tar`` run as the judge)."""
        env = {**self.base_env, **request.env}
        if request.trusted_path:
            env["PATH"] = room.trusted_path(env.get("PATH") or DEFAULT_PATH,
                                            room.writable(self.profile)) or DEFAULT_PATH
        return dataclasses.replace(request, env=env)

    def died_of_memory(self) -> bool:
        """Whether the host OOM-killed the whole sandbox (under gVisor, the candidate's
        memory and the sandbox kernel's are one process there), as the engine records it
        (:func:`sandbox.docker.death.died_of_memory`); notes it for later. A cancelled
        sandbox is not asked about: its run's result is the cancel's whatever ended it, and
        the engine's answer for a death not of memory takes :data:`~sandbox.docker.death.
        OOM_EVENT_WAIT_S` (its event window), the cancelled sandbox's removal behind it."""
        if self.ended_by == CANCELLED:
            return False
        if self.gvisor and death.died_of_memory(self.client, self.container):
            self.ended_by = MEMORY
        return self.ended_by == MEMORY

    def oom_happened(self, raw: RawExec | None = None) -> bool:
        """Whether the memory cgroup's OOM-kill counter moved since we last looked (under
        gVisor, whether the host killed the sandbox for its memory): the count the
        supervisor read when ``raw``'s command ended (protocol 6), else read now."""
        if self.gvisor:
            return self.ended_by == MEMORY
        count = raw.oom_kills if raw is not None and raw.oom_kills is not None else None
        if count is None:
            count = self._oom_count()
        happened, self._oom_seen = count > self._oom_seen, max(count, self._oom_seen)
        if happened:
            self.hits.add("oom")
        return happened

    def _oom_count(self) -> int:
        """The OOM-kill counter, read by a request (the last count seen if unreadable)."""
        hardening = self.profile.hardening
        user = hardening.user if self.channel is not None else hardening.keeper_user
        request = ExecRequest(argv=("sh", "-c", scripts.OOM_COUNT), user=user, workdir="/",
                              env={}, stdin=b"", timeout_s=INTERNAL_TIMEOUT_S, cap=4096)
        raw = self.run(request, nothing)
        fields = raw.stdout.split() if raw else []
        return int(fields[1]) if len(fields) > 1 and fields[1].isdigit() else self._oom_seen

    def usage(self) -> tuple[Mapping[str, float], str]:
        """Peak memory and CPU time from the container's cgroup: the host's when visible,
        else as the supervisor reads it inside; with them, why they are missing (``""``
        when found). Never raises."""
        if self.gvisor:
            return {}, GVISOR_USAGE
        found = read_usage(self.id)
        if found or self.channel is None:
            return found, "" if found else NO_USAGE
        request = internal_request(self.profile, ("sh", "-c", scripts.USAGE), cap=4096)
        try:
            raw = self.run(request, nothing)
        except SandboxError as error:
            log.info("usage of %s not readable: %s", self.id[:12], error)
            return {}, NO_USAGE
        inside = parse_inside(raw.stdout) if raw else {}
        return inside, "" if inside else NO_USAGE

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

    def retire(self) -> bool:
        """Stop the wall clock without removing the container (a reusable sandbox's run is
        over); whether the container outlived it (the deadline did not kill it)."""
        self._timer.cancel()
        if self._timer is not threading.current_thread():
            self._timer.join(death.DEATH_WAIT_S)  # an expiry already under way finishes first
        return not self.deadline_exceeded

    def close(self) -> None:
        """Hang up and remove the container (force, asked again while the engine is
        struggling: :mod:`sandbox.docker.removal`); never raises."""
        self._timer.cancel()
        if self._closed:
            return
        self._closed = True
        removal.remove(self.container, line=self.line)

    def end(self, why: str) -> None:
        """End the container now, from any thread (``why``: :data:`CANCELLED`), as the
        wall deadline does; every later request finds it ended, and ``close`` removes it."""
        self.ended_by = self.ended_by or why
        self._timer.cancel()
        self._stop_container()

    def _expire(self) -> None:
        """The wall deadline: end the container (``close`` removes it)."""
        self._expired.set()
        self.ended_by = self.ended_by or DEADLINE
        self._stop_container()

    def _stop_container(self) -> None:
        """Hang up on the container (its supervisor or keep-alive exits) and let it stop by
        itself; the engine kills it only if it has not stopped within
        :data:`~sandbox.docker.removal.EXIT_WAIT_S` (why: :mod:`sandbox.docker.removal`)."""
        if self.line is not None and removal.hang_up(self.line, self.container):
            return
        try:
            self.container.kill()
        except Exception as error:  # already gone or stopping: nothing left to kill
            log.info("kill of %s (%s): %s", self.id[:12], self.ended_by, error)
