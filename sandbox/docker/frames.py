"""The supervisor's wire (protocol in ``sandbox/images/supervisor/supervisor.c``): frames of
``[type: 1 byte][length: 4 bytes, big endian][payload]`` both ways, the ``R`` request's
payload, the supervisor's frames read out of Docker's multiplexed attach stream, and one
command's answer gathered from them. :mod:`sandbox.docker.channel` drives it.
"""

from __future__ import annotations

import logging
import struct
from collections.abc import Iterator
from typing import Any

from evalfleet.sandbox.docker.stream import Capped, ExecRequest

log = logging.getLogger(__name__)

FRAME = struct.Struct(">cI")
#: A request's number (``K`` aimed at one request, protocol 6).
NUMBER = struct.Struct(">I")
#: The ``R`` flag of a queued request (protocol 6).
_QUEUED = 8
#: An ``R`` frame's head: flags, uid, gid.
_RUN_HEAD = struct.Struct(">BII")
#: The seed records' length in an ``R`` frame (protocol 5).
_LENGTH = struct.Struct(">I")
_DOCKER_FRAME = struct.Struct(">BxxxI")
#: Bytes of stdin per frame sent to the supervisor.
STDIN_CHUNK = 1 << 20


class ChannelClosed(OSError):
    """The supervisor's stream ended or broke (the container died or was removed)."""



def encode_run(request: ExecRequest, *, queued: bool = False) -> bytes:
    """The payload of an ``R`` frame: flags, uid, gid, the seed records (their length
    first) when there are any, then workdir, ``KEY=VALUE``s, an empty field and argv, each
    NUL-terminated."""
    uid, gid = numeric_user(request.user)
    fields = [request.workdir, *(f"{k}={v}" for k, v in request.env.items()), "",
              *request.argv]
    flags = ((1 if request.stop_first else 0) | (2 if request.null_stdin else 0)
             | (_QUEUED if queued else 0))
    seed = b""
    if request.seed is not None:
        flags |= 4
        seed = _LENGTH.pack(len(request.seed)) + request.seed
    return (_RUN_HEAD.pack(flags, uid, gid) + seed
            + b"".join(field.encode() + b"\0" for field in fields))


def numeric_user(user: str) -> tuple[int, int]:
    """``"uid:gid"`` (or ``"uid"``, gid = uid) as numbers; the supervisor refuses 0.

    Raises:
        ValueError: ``user`` is not numeric.
    """
    uid, _, gid = user.partition(":")
    return int(uid), int(gid or uid)


def chunks(data: bytes) -> Iterator[bytes]:
    for offset in range(0, len(data), STDIN_CHUNK):
        yield data[offset:offset + STDIN_CHUNK]


def read_frames(sock: Any) -> Iterator[tuple[bytes, bytes]]:
    """The supervisor's frames, read from Docker's multiplexed attach stream."""
    stream, left = 1, 0
    pending, buffer = bytearray(), bytearray()
    while chunk := sock.recv(1 << 16):
        pending += chunk
        while pending:
            if left == 0:
                if len(pending) < _DOCKER_FRAME.size:
                    break
                stream, left = _DOCKER_FRAME.unpack_from(pending)
                del pending[:_DOCKER_FRAME.size]
                continue
            piece = bytes(pending[:left])
            del pending[:left]
            left -= len(piece)
            if stream == 1:
                buffer += piece
            else:
                log.warning("sandbox supervisor: %s", piece[:300])
        yield from _complete(buffer)


def _complete(buffer: bytearray) -> Iterator[tuple[bytes, bytes]]:
    """Pop every complete supervisor frame off ``buffer``."""
    while len(buffer) >= FRAME.size:
        kind, size = FRAME.unpack_from(buffer)
        if len(buffer) < FRAME.size + size:
            return
        payload = bytes(buffer[FRAME.size:FRAME.size + size])
        del buffer[:FRAME.size + size]
        yield kind, payload


class Outcome:
    """How one command ended, filled in by :class:`_Wait`."""

    def __init__(self, streams: dict[bytes, Capped]) -> None:
        self.streams = streams
        self.kind: bytes | None = None
        self.exit_code: int | None = None
        self.start_error: str | None = None
        self.oom_kills: int | None = None
        self.timed_out = False

    def take(self, kind: bytes, payload: bytes) -> bool:
        """Note one frame; returns ``True`` if an output newly passed its cap."""
        if kind in self.streams:
            return self.streams[kind].add(payload)
        if kind == b"x":  # "137 oom_kill=N" after a SIGKILL (protocol 6)
            status, _, oom = payload.partition(b" oom_kill=")
            self.kind, self.exit_code = kind, int(status)
            self.oom_kills = int(oom) if oom.isdigit() else None
        elif kind == b"f":
            self.kind, self.start_error = kind, payload.decode(errors="replace")
        elif kind == b"s":
            self.kind = kind
        else:
            raise ChannelClosed(f"unexpected frame {kind!r} from the supervisor")
        return False
