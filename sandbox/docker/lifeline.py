"""The worker's hold on a sandbox driven by ``exec``: its keep-alive's stdio.

A sandbox of an image without the supervisor keeps running on a keep-alive (a shell that
reads its stdin until it ends, as ``keeper_user`` under Docker's init). The container is
created with ``StdinOnce``, and the worker attaches to its stdio and holds that
connection for the sandbox's whole life. Hanging up (:meth:`Lifeline.close`) ends the
keep-alive's stdin, it exits, Docker's init exits with it, and the container stops with
every process in it — by itself, as a supervised sandbox does when its channel closes, so
the engine never has to kill a running container (bug 17 in docs/reliability.md). A worker
that dies hangs up the same way. The other way round, the stream's end tells the worker
that the container stopped (:attr:`Lifeline.ended`), whatever stopped it.

:data:`Line` is whichever the sandbox has: its supervisor's
:class:`~sandbox.docker.channel.Channel` or its keep-alive's :class:`Lifeline`; both hang
up with ``close()``.
"""

from __future__ import annotations

import contextlib
import threading
import weakref
from typing import Any

from evalfleet.sandbox.docker.channel import Channel, hang_up, raw_socket


class Lifeline:
    """The attached stdio of one keep-alive container: nothing is ever sent on it, and the
    keep-alive writes nothing; its end is the container's (:attr:`ended`)."""

    def __init__(self, owner: Any) -> None:
        self._owner = owner
        self._sock = raw_socket(owner)
        self.ended = threading.Event()
        """Set once the attach stream ended: the container stopped, or we hung up. Under
        gVisor an ``exec``'s own stream can outlive its container by minutes (the engine
        keeps it open after the host killed the sandbox at its memory limit); this is
        how a request in flight learns the container is gone."""
        threading.Thread(target=_watch, args=(self._sock, self.ended), name="sandbox-lifeline",
                         daemon=True).start()
        weakref.finalize(self, hang_up, self._sock, owner)  # a dropped lifeline hangs up

    @classmethod
    def attach(cls, api: Any, container_id: str) -> Lifeline:
        """Attach to the container's stdin, stdout and stderr (docker SDK errors propagate);
        the engine ends the stream when the container's outputs close."""
        params = {"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1}
        return cls(api.attach_socket(container_id, params=params))

    def close(self) -> None:
        """Hang up (the keep-alive then exits); never raises."""
        hang_up(self._sock, self._owner)


def _watch(sock: Any, ended: threading.Event) -> None:
    """The reader thread: it holds the socket, never the :class:`Lifeline`, so a lifeline
    nobody holds any more is collected, and its finalizer hangs up."""
    with contextlib.suppress(OSError, ValueError):
        while sock.recv(1 << 12):
            pass  # nothing is expected; whatever comes is dropped
    ended.set()


#: The worker's line to a sandbox: its supervisor's channel, or its keep-alive's lifeline.
Line = Channel | Lifeline


def supervisor(line: Line | None) -> Channel | None:
    """The supervisor's channel, if ``line`` is one (``None``: driven by ``exec``)."""
    return line if isinstance(line, Channel) else None
