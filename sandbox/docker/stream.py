"""One ``exec`` with stdin, a timeout and output capped *while streaming*.

The docker SDK's ``exec_run`` takes no stdin and buffers output whole, so this talks to the
hijacked exec socket directly: a writer thread feeds stdin and half-closes it; the reader
demultiplexes Docker's 8-byte frame headers and keeps at most ``cap`` bytes per stream.
When a stream passes its cap or the timeout passes, ``on_limit`` is called once (the
driver kills the candidate's processes) and the rest is drained for a short grace period.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

#: Seconds to keep draining after ``on_limit`` before giving up on the stream.
GRACE_S = 5.0
#: Seconds to wait for Docker to publish an exec's exit code after its stream ends. The
#: wait ends as soon as the engine has it (milliseconds on a quiet host); 2 s was not enough
#: for a gVisor exec on a host busy with three test workers, and the listing it ended was
#: read as failed.
EXIT_WAIT_S = 10.0
_HEADER = struct.Struct(">BxxxI")
#: Docker writes this on stdout (exit 126, pid 0) when runc could not start the process.
OCI_FAILURE = b"OCI runtime exec failed"
#: Seconds between looks at ``ended`` while an exec's stream is quiet.
ENDED_POLL_S = 0.1


class ContainerStopped(OSError):
    """The container stopped while an exec ran, and the engine left the exec's stream open
    (gVisor): the exec was given up."""


@dataclass
class Capped:
    """A stream buffer that keeps the first ``cap`` bytes and notes any excess."""

    cap: int
    data: bytearray = field(default_factory=bytearray)
    truncated: bool = False

    def add(self, chunk: bytes) -> bool:
        """Keep what fits; returns ``True`` the first time the cap is passed."""
        room = self.cap - len(self.data)
        self.data += chunk[:max(room, 0)]
        newly = len(chunk) > room and not self.truncated
        self.truncated = self.truncated or len(chunk) > room
        return newly


@dataclass(frozen=True)
class RawExec:
    """What the engine reported for one exec."""

    exit_code: int | None
    stdout: bytes
    stderr: bytes
    stdout_truncated: bool
    stderr_truncated: bool
    timed_out: bool
    duration_s: float
    start_error: str | None = None
    """Set when runc could not start the process (bad workdir, no pids left, …)."""
    oom_kills: int | None = None
    """The sandbox cgroup's OOM kills so far, read when a SIGKILLed command ended (the
    supervisor's answer, protocol 6); ``None`` when not read."""


@dataclass(frozen=True)
class ExecRequest:
    """Everything :func:`run_exec` needs besides the engine and the container."""

    argv: Sequence[str]
    user: str
    workdir: str
    env: Mapping[str, str]
    stdin: bytes
    timeout_s: float
    cap: int
    null_stdin: bool = False
    """The command's stdin is ``/dev/null`` (``stdin`` must be empty); supervisor protocol
    4 only (:attr:`~sandbox.docker.factory.ImageFacts.collector` says it is there)."""
    seed: bytes | None = None
    """Seed records (:func:`~sandbox.docker.transfer.seed_records`) the command's process
    writes into ``workdir`` as ``user`` before it becomes the command, its stdin
    ``/dev/null``; supervisor protocol 5 only (:attr:`~sandbox.docker.factory.ImageFacts.
    seeds` says it is there). A failure is a ``start_error`` (the supervisor's message
    starts ``evalfleet-supervisor seed:``)."""
    stop_first: bool = False
    """The request starts by stopping the candidate. Through ``docker exec`` its script
    does that; through the supervisor (:mod:`sandbox.docker.channel`) pid 1 does it first,
    where a candidate cannot race it."""
    trusted_path: bool = False
    """A driver step: its ``PATH`` loses the directories the candidate can write (host
    side only: :meth:`~sandbox.docker.conduit.Conduit.stamp`)."""


def run_exec(api: Any, container_id: str, request: ExecRequest,
             on_limit: Callable[[], None], ended: threading.Event | None = None) -> RawExec:
    """Run ``request`` in the container; engine errors propagate (see ``failure``).

    Raises:
        ContainerStopped: ``ended`` was set (the container stopped) before the stream ended.
    """
    if request.seed is not None:
        raise ValueError("seed records need the supervisor (protocol 5), not docker exec")
    started = time.monotonic()
    exec_id = api.exec_create(container_id, list(request.argv), stdin=True, stdout=True,
                              stderr=True, user=request.user, workdir=request.workdir,
                              environment=dict(request.env))["Id"]
    wrapper = api.exec_start(exec_id, socket=True)
    raw = wrapper._sock
    try:
        _feed(raw, request.stdin)
        streams = {1: Capped(request.cap), 2: Capped(request.cap)}
        timed_out = _pump(raw, streams, started + request.timeout_s, on_limit, ended)
    finally:
        wrapper.close()
        raw.close()
    exit_code, pid = _exit_status(api, exec_id)
    out = bytes(streams[1].data)
    if pid == 0 and exit_code == 126 and out.startswith(OCI_FAILURE):
        return RawExec(None, b"", b"", False, False, False, time.monotonic() - started,
                       start_error=out.decode(errors="replace").strip())
    return RawExec(exit_code, out, bytes(streams[2].data), streams[1].truncated,
                   streams[2].truncated, timed_out, time.monotonic() - started)


def _feed(raw: socket.socket, data: bytes) -> None:
    """Write stdin on a thread (the process may answer before reading it all), then EOF.

    Empty stdin is just the EOF, sent at once (starting a thread costs several ms).
    """
    if not data:
        with contextlib.suppress(OSError):  # the process already exited
            raw.shutdown(socket.SHUT_WR)
        return

    def write() -> None:
        try:
            raw.sendall(data)
            raw.shutdown(socket.SHUT_WR)
        except OSError:
            pass  # the process exited or was killed before reading everything

    threading.Thread(target=write, name="sandbox-stdin", daemon=True).start()


def _pump(raw: socket.socket, streams: dict[int, Capped], deadline: float,
          on_limit: Callable[[], None], ended: threading.Event | None) -> bool:
    """Read frames until EOF; returns whether the deadline passed.

    ``on_limit`` runs on its own thread: the engine only ends the exec once its output is
    consumed, so reading must go on while the driver kills the processes.

    Raises:
        ContainerStopped: ``ended`` was set first.
    """
    frames = _Frames(streams)
    limiter = _Limiter(on_limit)
    try:
        return _read(raw, frames, deadline, limiter, ended)
    finally:
        limiter.join()  # never return while the kill could still hit the next command


def _read(raw: socket.socket, frames: _Frames, deadline: float, limiter: _Limiter,
          ended: threading.Event | None) -> bool:
    timed_out = limited = False
    poll = ENDED_POLL_S if ended is not None else float("inf")
    while True:
        if ended is not None and ended.is_set():
            raise ContainerStopped("the container stopped while the exec ran")
        now = time.monotonic()
        if not limited and now >= deadline:
            timed_out = limited = True
            limiter.trigger()
            deadline = now + GRACE_S
        elif limited and now >= deadline:
            return timed_out
        raw.settimeout(min(max(deadline - now, 0.01), poll))
        try:
            chunk = raw.recv(1 << 16)
        except TimeoutError:
            continue
        if not chunk:
            return timed_out
        if frames.feed(chunk) and not limited:
            limited = True
            limiter.trigger()
            deadline = time.monotonic() + GRACE_S


class _Limiter:
    """Runs ``on_limit`` once, on a thread, and lets the reader wait for it at the end."""

    def __init__(self, action: Callable[[], None]) -> None:
        self.thread = threading.Thread(target=action, name="sandbox-limit", daemon=True)

    def trigger(self) -> None:
        self.thread.start()

    def join(self) -> None:
        if self.thread.ident is not None:
            self.thread.join()


class _Frames:
    """Docker's stream multiplexing: ``[stream, 0, 0, 0, size(4, big-endian)] payload``."""

    def __init__(self, streams: dict[int, Capped]) -> None:
        self.streams = streams
        self.pending = b""
        self.stream = 1
        self.left = 0

    def feed(self, chunk: bytes) -> bool:
        """Consume bytes; returns ``True`` if a stream newly passed its cap."""
        over = False
        data = self.pending + chunk
        self.pending = b""
        while data:
            if self.left == 0:
                if len(data) < _HEADER.size:
                    self.pending = data
                    break
                self.stream, self.left = _HEADER.unpack_from(data)
                data = data[_HEADER.size:]
                continue
            piece, data = data[:self.left], data[self.left:]
            self.left -= len(piece)
            over = self.streams.get(self.stream, self.streams[2]).add(piece) or over
        return over


def _exit_status(api: Any, exec_id: str) -> tuple[int | None, int]:
    """The exec's exit code (``None`` if still running after a short wait) and its pid."""
    give_up = time.monotonic() + EXIT_WAIT_S
    while True:
        info = api.exec_inspect(exec_id)
        if not info.get("Running") or time.monotonic() > give_up:
            code = info.get("ExitCode") if not info.get("Running") else None
            return code, int(info.get("Pid") or 0)
        time.sleep(0.01)


def first_line(data: bytes) -> str:
    """The first non-blank line of an output (for error messages), or ``""``."""
    return data.decode(errors="replace").strip().splitlines()[0] if data.strip() else ""
