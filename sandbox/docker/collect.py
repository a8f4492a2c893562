"""Stop the candidate and make every read (files, listings) in one ``exec``.

:data:`sandbox.docker.scripts.COLLECT` answers with one framed stream (or, when every check
is a file capture and the image's supervisor speaks protocol 4, the supervisor binary's
``--collect`` mode writes the same stream with no shell, ``wc`` or ``head`` per file: the
supervisor's forked process collects by itself, without even an exec, unless a capture
reaches ``/proc``: :func:`command`); :func:`parse` turns
it back into the reads' results (:meth:`~sandbox.batching.Batching.stop_and_read`: the
files under one total, as the script applies it), the same the read-by-read path gives (the
contract suite runs both). Anything unexpected in the stream makes the caller fall back to
reading one by one.
"""

from __future__ import annotations

import dataclasses
import logging
import secrets
from collections.abc import Sequence
from dataclasses import dataclass

from evalfleet.sandbox.batching import ListDir, Read, ReadFile
from evalfleet.sandbox.docker import scripts, transfer
from evalfleet.sandbox.docker.conduit import internal_request
from evalfleet.sandbox.docker.stream import ExecRequest, RawExec
from evalfleet.sandbox.profile import Limits, Profile
from evalfleet.sandbox.results import FileRead, Listing, count

log = logging.getLogger(__name__)

Result = FileRead | Listing
_NOT_CAPTURED = {"link": "not captured: the path is a link", "missing": None,
                 "other": "not captured: not a regular file",
                 "unreadable": "not captured: permission denied"}


class StreamError(Exception):
    """The collect stream is not what the script writes: fall back."""


@dataclass(frozen=True)
class Request:
    """The script's arguments and what the host needs to read the answer back."""

    nonce: str
    argv: tuple[str, ...]
    cap: int
    """Output cap for the exec: everything the answer may legitimately hold."""


def request(reads: Sequence[Read], total_bytes: int, limits: Limits) -> Request:
    """Build the arguments of :data:`~sandbox.docker.scripts.COLLECT`."""
    nonce = secrets.token_hex(16)
    max_entries = limits.listing_entries
    argv: list[str] = [nonce, str(total_bytes), str(max_entries + 1)]
    listed = f"{limits.tree_depth + 1}:{transfer.MAX_LINE + 1}"
    cap = 4096
    for read in reads:
        if isinstance(read, ReadFile):
            argv += ["F", read.path, str(read.limit)]
            cap += 256 + min(read.limit, max(total_bytes, 0))
        else:
            argv += ["L", read.path, listed]
            cap += 256 + (max_entries + 1) * (transfer.MAX_LINE + 2)
    return Request(nonce, tuple(argv), cap)


def command(sent: Request, collector: str | None) -> tuple[str, ...]:
    """The request's argv: the ``collector``'s ``--collect`` (the supervisor's path, protocol
    4) when every read is a file's, else :data:`~sandbox.docker.scripts.COLLECT`."""
    kinds = sent.argv[3::3]
    if collector is not None and "L" not in kinds:
        return (collector, "--collect", *sent.argv)
    return ("sh", "-c", scripts.COLLECT, "sh", *sent.argv)


def build(profile: Profile, reads: Sequence[Read], total_bytes: int,
          collector: str | None) -> tuple[Request, ExecRequest]:
    """The request of every read in one (:func:`request`, :func:`command`), as the
    candidate's uid once every process is stopped; the collector's stdin is null."""
    sent = request(reads, total_bytes, profile.limits)
    built = internal_request(profile, command(sent, collector), cap=sent.cap, stop_first=True)
    return sent, dataclasses.replace(built, null_stdin=collector is not None)


def answer(raw: RawExec, reads: Sequence[Read], sent: Request, total_bytes: int,
           limits: Limits, *, where: str) -> tuple[Result, ...] | None:
    """The reads' results from the request's raw answer; ``None`` when the request failed
    or its stream is unusable (logged, naming ``where``: the sandbox): read one by one."""
    if raw.exit_code != 0 or raw.stdout_truncated:
        return None
    try:
        return parse(raw.stdout, reads, sent, total_bytes, limits)
    except StreamError as error:
        log.warning("collect stream of %s unusable (%s); checking one by one", where, error)
        return None


def parse(output: bytes, reads: Sequence[Read], sent: Request, total_bytes: int,
          limits: Limits) -> tuple[Result, ...]:
    """The reads' results from the stream, in order, the files under ``total_bytes`` (see
    :meth:`~sandbox.batching.Batching.stop_and_read`).

    Raises:
        StreamError: the stream does not follow the script's framing.
    """
    reader = _Reader(output, sent.nonce)
    results: list[Result] = []
    remaining = total_bytes
    for index, read in enumerate(reads):
        if isinstance(read, ListDir):
            results.append(_listing(reader, index, read.path, limits))
            continue
        found = _file(reader, index, min(read.limit, remaining))
        remaining -= found.size
        results.append(found)
    return tuple(results)


def _file(reader: _Reader, index: int, limit: int) -> FileRead:
    status, rest = reader.header(index)
    if status != "file":
        if status not in _NOT_CAPTURED:
            raise StreamError(f"unknown status {status!r}")
        return FileRead(False, error=_NOT_CAPTURED[status])
    size = count(rest)
    if size is None:
        raise StreamError("bad size")
    return FileRead(True, size=size, content=reader.take(min(size, max(limit, 0))))


def _listing(reader: _Reader, index: int, path: str, limits: Limits) -> Listing:
    status, _ = reader.header(index)
    if status != "list":
        raise StreamError(f"expected a listing, got {status!r}")
    body = reader.until(f"@{reader.nonce} {index} end\n".encode())
    if body.startswith(f"@{reader.nonce} {index} nodir\n".encode()):
        return Listing(error="cannot open directory")
    return transfer.parse_listing(body, path, limits.listing_entries, depth=limits.tree_depth)


class _Reader:
    """A cursor over the stream."""

    def __init__(self, data: bytes, nonce: str) -> None:
        self.data, self.nonce, self.pos = data, nonce, 0

    def header(self, index: int) -> tuple[str, str]:
        end = self.data.find(b"\n", self.pos)
        if end < 0:
            raise StreamError("stream ended early")
        words = self.data[self.pos:end].decode(errors="replace").split(" ")
        if words[:2] != [f"@{self.nonce}", str(index)] or len(words) < 3:
            raise StreamError("header out of step")
        self.pos = end + 1
        return words[2], " ".join(words[3:])

    def take(self, count: int) -> bytes:
        chunk = self.data[self.pos:self.pos + count]
        if len(chunk) != count:
            raise StreamError("content cut short")
        self.pos += count
        return chunk

    def until(self, marker: bytes) -> bytes:
        end = self.data.find(marker, self.pos)
        if end < 0:
            raise StreamError("listing end missing")
        body, self.pos = self.data[self.pos:end], end + len(marker)
        return body
