"""Commands through the sandbox's supervisor instead of ``docker exec``.

An image built with ``sandbox/images/supervisor`` runs ``evalfleet-supervisor`` as the
container's pid 1 (see its source for why the candidate cannot reach it). The host talks
to it over the container's attached stdin/stdout: a command costs a vfork and an exec
inside the container instead of a round trip through dockerd, containerd and runc.

:class:`Channel` keeps :func:`sandbox.docker.stream.run_exec`'s contract: the same
:class:`ExecRequest` in, the same :class:`RawExec` out, output capped while it streams,
the timeout timed on the host, and ``on_limit`` called once on its own
thread. A reader thread demultiplexes Docker's frames, then the supervisor's
(``[type][length: 4 bytes, big endian][payload]``), and routes them: a stop's answer to
:meth:`Channel.stop`, a reset's to :meth:`Channel.reset`, everything else to the running
:meth:`Channel.run`.

A request may bring the requests that follow it (``then``, protocol 6): they are sent at
once, *queued*, and the supervisor starts each as soon as the one before it has ended, so
the host's turnaround between two steps of a run (about half a millisecond: the answer
through dockerd, the reader thread, the driver building the next request, back through
dockerd) is no longer the sandbox's idle time. Answers still come in request order. A
queued request is skipped when the one before it could not start (the driver then takes
another way, and a later :meth:`Channel.run` of it sends it again); one that ran but is
never asked for leaves the channel out of step (the sandbox is not reused).
"""

from __future__ import annotations

import contextlib
import logging
import queue
import socket
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from evalfleet.sandbox.docker.frames import (
    FRAME,
    NUMBER,
    ChannelClosed,
    Outcome,
    chunks,
    encode_run,
    read_frames,
)
from evalfleet.sandbox.docker.stream import GRACE_S, Capped, ExecRequest, RawExec

log = logging.getLogger(__name__)

#: The protocol version this module speaks (images say theirs in a label, see ``factory``).
#: Version 3 added the reset (``C``), which sandbox reuse needs; 4 the supervisor's start
#: option ``--dirs-as`` (the judge's room's parts made at the start) and its ``--collect``
#: mode (file captures without a shell, see :mod:`sandbox.docker.collect`); 5 the seed
#: records a request may carry (:attr:`~sandbox.docker.stream.ExecRequest.seed`); 6 queued
#: requests (``then``) and stops aimed at one request.
PROTOCOL = "6"
#: Supervisor versions this module can drive: 2 is 3 without the reset, 3 is 4 without the
#: start-up directories and the collect mode, 4 is 5 without the seed records, 5 is 6
#: without queued requests.
SUPPORTED = ("2", "3", "4", "5", "6")
#: Seconds :meth:`Channel.stop` waits for the supervisor's answer.
STOP_WAIT_S = 30.0
#: Seconds :meth:`Channel.reset` waits for the supervisor's answer.
RESET_WAIT_S = 30.0
_CLOSED = (b"", b"")


def hang_up(sock: Any, owner: Any = None) -> None:
    """Close an attach connection (``sock``, and the docker SDK's ``owner`` of it): a
    container created with ``StdinOnce`` sees its stdin end. Never raises."""
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    for each in (sock, owner):
        with contextlib.suppress(OSError, AttributeError):
            each.close()


def raw_socket(wrapper: Any) -> Any:
    """The socket inside the docker SDK's attach wrapper (``wrapper`` if it is one)."""
    return getattr(wrapper, "_sock", wrapper)


class Channel:
    """The attached stdio of one supervisor container; one command at a time."""

    def __init__(self, sock: Any, owner: Any = None) -> None:
        self._sock, self._owner = sock, owner
        self._send_lock = threading.Lock()
        self._answers = _Answers(queue.Queue(), queue.Queue(), queue.Queue())
        self._broken = False
        self._sent = 0
        """``R`` frames sent: the supervisor numbers requests the same way, from 1."""
        self._current = 0
        """The number of the request whose answer is awaited."""
        self._ahead: deque[tuple[int, ExecRequest]] = deque()
        """Requests sent queued (``then``) and not yet asked for, in order."""
        self._reader = threading.Thread(target=_read_loop, args=(sock, owner, self._answers),
                                        name="sandbox-channel", daemon=True)
        self._reader.start()
        weakref.finalize(self, hang_up, sock, owner)  # a dropped channel hangs up

    @classmethod
    def attach(cls, api: Any, container_id: str) -> Channel:
        """Attach to the container's stdin and stdout (docker SDK errors propagate)."""
        params = {"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1}
        wrapper = api.attach_socket(container_id, params=params)
        return cls(raw_socket(wrapper), wrapper)

    @property
    def open(self) -> bool:
        """Whether the supervisor's stream is still there (its container is running)."""
        return self._reader.is_alive()

    @property
    def ahead(self) -> int:
        """Requests sent ahead (``then``) and not yet asked for."""
        return len(self._ahead)

    @property
    def in_step(self) -> bool:
        """Whether every command and reset sent has been answered (a command that outlived
        its grace period, or a reset never answered, leaves the channel unusable), and no
        request sent ahead is left unasked for."""
        return not self._broken and not self._ahead

    def run(self, request: ExecRequest, on_limit: Callable[[], None],
            then: Sequence[ExecRequest] = ()) -> RawExec:
        """Run ``request`` as ``request.user`` (the supervisor switches to it; never root),
        and send ``then`` queued behind it unless requests are queued already (protocol 6;
        each must stop first and have a null stdin). A request sent ahead earlier is not
        sent again: its answer is awaited (or, if it was skipped, it is sent now).

        Raises:
            ChannelClosed: the container went away, an earlier command never ended, or a
                request sent ahead ran but is not the one asked for now.
            ValueError: a request of ``then`` may not be queued.
        """
        if self._broken:
            raise ChannelClosed("the supervisor channel is out of step")
        if any(each.stdin or not (each.null_stdin and each.stop_first) for each in then):
            raise ValueError("a queued request must stop first and have a null stdin")
        started = time.monotonic()
        outcome = self._answer_ahead(request, on_limit) if self._ahead else None
        if outcome is None:
            outcome = self._send_and_wait(request, on_limit, then)
        elif then and not self._ahead:
            self._send_queued(then)
        out, err = outcome.streams[b"o"], outcome.streams[b"e"]
        return RawExec(outcome.exit_code, bytes(out.data), bytes(err.data), out.truncated,
                       err.truncated, outcome.timed_out, time.monotonic() - started,
                       start_error=outcome.start_error, oom_kills=outcome.oom_kills)

    def _send_and_wait(self, request: ExecRequest, on_limit: Callable[[], None],
                       then: Sequence[ExecRequest]) -> Outcome:
        self._send(b"R", encode_run(request))
        self._sent += 1
        number = self._sent
        for chunk in chunks(request.stdin):
            self._send(b"I", chunk)
        self._send(b"E", b"")
        if then:  # nothing is ahead: what was has been answered or skipped
            self._send_queued(then)
        return self._wait(number, request, on_limit)

    def _send_queued(self, requests: Sequence[ExecRequest]) -> None:
        for each in requests:
            self._send(b"R", encode_run(each, queued=True))
            self._sent += 1
            self._ahead.append((self._sent, each))

    def _answer_ahead(self, request: ExecRequest,
                      on_limit: Callable[[], None]) -> Outcome | None:
        """The answer of ``request`` if it was sent ahead and ran; ``None`` when it must be
        sent (it was skipped, or it is another request: the ones ahead were skipped).

        Raises:
            ChannelClosed: a request sent ahead ran, but ``request`` is another one.
        """
        number, ahead = self._ahead.popleft()
        outcome = self._wait(number, ahead, on_limit if ahead == request else _nothing)
        if outcome.kind == b"s":
            self._skip_ahead()
            return None
        if ahead != request:
            self._broken = True
            raise ChannelClosed("a request sent ahead ran, but another was asked for")
        return outcome

    def _skip_ahead(self) -> None:
        """Read the skips of the requests still ahead (one skipped, all are)."""
        while self._ahead:
            number, ahead = self._ahead.popleft()
            if self._wait(number, ahead, _nothing).kind != b"s":
                self._broken = True
                raise ChannelClosed("a request queued behind a skipped one ran")

    def _wait(self, number: int, request: ExecRequest,
              on_limit: Callable[[], None]) -> Outcome:
        self._current = number
        outcome = Outcome({b"o": Capped(request.cap), b"e": Capped(request.cap)})
        _Wait(self._answers.events, outcome, request, on_limit).until_done()
        if outcome.kind is None:
            self._broken = True  # the command outlived the grace period: unusable now
        return outcome

    def stop(self) -> str:
        """Kill every process but the supervisor; ``""`` when none is left, else why not.

        Raises:
            ChannelClosed: the container went away.
        """
        # Aimed at the awaited request while others are queued behind it: one of those may
        # have started since (its own stop first did this stop's work).
        self._send(b"K", NUMBER.pack(self._current) if self._ahead else b"")
        try:
            kind, payload = self._answers.stops.get(timeout=STOP_WAIT_S)
        except queue.Empty:
            return "no answer from the supervisor"
        if (kind, payload) == _CLOSED:
            raise ChannelClosed("the sandbox's supervisor went away")
        return "" if payload == b"0" else payload.decode(errors="replace")[2:]

    def reset(self) -> str:
        """Ask the supervisor to make the sandbox as it was at its start (protocol 3, a
        supervisor started ``--reusable``); its answer: ``"0 key=value..."`` when the
        reset is verified, else ``"1 <why not>"``.

        Raises:
            ChannelClosed: the container went away.
        """
        if self._ahead:
            self._broken = True
            return "1 requests sent ahead were never asked for"
        if self._broken:
            return "1 the supervisor channel is out of step"
        self._send(b"C", b"")
        try:
            kind, payload = self._answers.resets.get(timeout=RESET_WAIT_S)
        except queue.Empty:
            self._broken = True  # a late answer would be read as the next reset's
            return "1 no answer from the supervisor"
        if (kind, payload) == _CLOSED:
            raise ChannelClosed("the sandbox's supervisor went away")
        return payload.decode(errors="replace")

    def close(self) -> None:
        """Hang up (the supervisor then exits); never raises."""
        hang_up(self._sock, self._owner)

    def _send(self, kind: bytes, payload: bytes) -> None:
        try:
            with self._send_lock:
                self._sock.sendall(FRAME.pack(kind, len(payload)) + payload)
        except OSError as error:
            raise ChannelClosed(f"the sandbox's supervisor went away: {error}") from error


@dataclass(frozen=True)
class _Answers:
    """Where the reader puts frames: a running command's, a stop's and a reset's."""

    events: queue.Queue[tuple[bytes, bytes]]
    stops: queue.Queue[tuple[bytes, bytes]]
    resets: queue.Queue[tuple[bytes, bytes]]

    def route(self, kind: bytes) -> queue.Queue[tuple[bytes, bytes]]:
        """A stop's or a reset's answer, or the running command's."""
        return self.stops if kind == b"k" else self.resets if kind == b"c" else self.events


def _read_loop(sock: Any, owner: Any, answers: _Answers) -> None:
    """The reader thread: it holds the socket, never the :class:`Channel`, so a channel
    nobody holds any more is collected, and its finalizer hangs up."""
    try:
        for kind, payload in read_frames(sock):
            answers.route(kind).put((kind, payload))
    except OSError:
        pass
    finally:
        hang_up(sock, owner)  # the container is gone (or we hung up): nothing more will come
        for each in (answers.events, answers.stops, answers.resets):
            each.put(_CLOSED)


def _nothing() -> None:
    """The limit of a request awaited only to be dropped: it runs to its end or timeout."""


class _Wait:
    """The host-side clock of one command: timeout, caps, grace."""

    def __init__(self, events: queue.Queue[tuple[bytes, bytes]], outcome: Outcome,
                 request: ExecRequest, on_limit: Callable[[], None]) -> None:
        self.events, self.outcome, self.request = events, outcome, request
        self.limit = threading.Thread(target=on_limit, name="sandbox-limit", daemon=True)
        self.deadline = time.monotonic() + request.timeout_s

    def until_done(self) -> None:
        """Consume frames until the command ended or the grace after a limit ran out."""
        try:
            while self.outcome.kind is None:
                left = self.deadline - time.monotonic()
                if left <= 0:
                    if self._limited():
                        return
                    self._trigger(timed_out=True)
                    continue
                try:
                    kind, payload = self.events.get(timeout=left)
                except queue.Empty:
                    continue
                if (kind, payload) == _CLOSED:
                    self.events.put(_CLOSED)
                    raise ChannelClosed("the sandbox's supervisor went away")
                if self.outcome.take(kind, payload) and not self._limited():
                    self._trigger(timed_out=False)
        finally:
            if self._limited():
                self.limit.join()  # never return while the kill could hit the next command

    def _limited(self) -> bool:
        return self.limit.ident is not None

    def _trigger(self, *, timed_out: bool) -> None:
        self.outcome.timed_out = timed_out
        self.limit.start()
        self.deadline = time.monotonic() + GRACE_S
