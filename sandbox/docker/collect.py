"""Stop the candidate and run every post-execution check in one ``exec``.

:data:`sandbox.docker.scripts.COLLECT` answers with one framed stream (or, when every check
is a file capture and the image's supervisor speaks protocol 4, the supervisor binary's
``--collect`` mode writes the same stream with no shell, ``wc`` or ``head`` per file: the
supervisor's forked process collects by itself, without even an exec, unless a capture
reaches ``/proc``: :func:`command`); :func:`parse` turns
it back into the same results the check-by-check path gives (the contract suite runs
both), applying the capture budget on the host exactly as
:class:`~sandbox.capture.CaptureBudget` does. Anything unexpected in the stream makes the
caller fall back to the check-by-check path.
"""

from __future__ import annotations

import dataclasses
import logging
import secrets
from collections.abc import Sequence
from dataclasses import dataclass

from evalfleet.sandbox.capture import (
    DEFAULT_MAX_FILE_BYTES,
    CaptureBudget,
    CaptureCheck,
    ListingCheck,
)
from evalfleet.sandbox.docker import scripts, transfer
from evalfleet.sandbox.docker.conduit import internal_request
from evalfleet.sandbox.docker.stream import ExecRequest, RawExec
from evalfleet.sandbox.paths import PathRejected, sandbox_path
from evalfleet.sandbox.profile import Limits, Profile
from evalfleet.sandbox.results import DirectoryListing, FileCapture, FileRead, count

log = logging.getLogger(__name__)

Result = FileCapture | DirectoryListing
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
    paths: dict[int, str]
    """Check index → resolved path, for checks that go to the sandbox."""
    rejected: dict[int, str]
    """Check index → why its path was refused before any exec."""
    cap: int
    """Output cap for the exec: everything the answer may legitimately hold."""


def request(checks: Sequence[CaptureCheck | ListingCheck], workspace: str,
            budget: CaptureBudget, limits: Limits) -> Request:
    """Build the arguments of :data:`~sandbox.docker.scripts.COLLECT`."""
    nonce = secrets.token_hex(16)
    max_entries = limits.listing_entries
    argv: list[str] = [nonce, str(budget.remaining), str(max_entries + 1)]
    listed = f"{limits.tree_depth + 1}:{transfer.MAX_LINE + 1}"
    paths: dict[int, str] = {}
    rejected: dict[int, str] = {}
    cap = 4096
    for index, check in enumerate(checks):
        try:
            paths[index] = sandbox_path(check.path, workspace)
        except PathRejected as error:
            rejected[index] = str(error)
            continue
        per_file = per_file_cap(check)
        argv += ["F", paths[index], str(per_file)] if per_file else ["L", paths[index], listed]
        cap += 256 + (min(per_file, max(budget.total_bytes, 0)) if per_file
                      else (max_entries + 1) * (transfer.MAX_LINE + 2))
    return Request(nonce, tuple(argv), paths, rejected, cap)


def command(sent: Request, collector: str | None) -> tuple[str, ...]:
    """The request's argv: the ``collector``'s ``--collect`` (the supervisor's path, protocol
    4) when every check is a file capture, else :data:`~sandbox.docker.scripts.COLLECT`."""
    kinds = sent.argv[3::3]
    if collector is not None and "L" not in kinds:
        return (collector, "--collect", *sent.argv)
    return ("sh", "-c", scripts.COLLECT, "sh", *sent.argv)


def build(profile: Profile, checks: Sequence[CaptureCheck | ListingCheck],
          budget: CaptureBudget, collector: str | None) -> tuple[Request, ExecRequest]:
    """The request of every check in one (:func:`request`, :func:`command`), as the
    candidate's uid once every process is stopped; the collector's stdin is null."""
    sent = request(checks, profile.workdir, budget, profile.limits)
    built = internal_request(profile, command(sent, collector), cap=sent.cap, stop_first=True)
    return sent, dataclasses.replace(built, null_stdin=collector is not None)


def per_file_cap(check: CaptureCheck | ListingCheck) -> int:
    """The per-file cap of a capture (0 for a listing)."""
    if isinstance(check, ListingCheck):
        return 0
    return check.max_size_bytes if check.max_size_bytes and check.max_size_bytes > 0 else (
        DEFAULT_MAX_FILE_BYTES)


def answer(raw: RawExec, checks: Sequence[CaptureCheck | ListingCheck], sent: Request,
           budget: CaptureBudget, limits: Limits, *, where: str) -> tuple[Result, ...] | None:
    """The checks' results from the request's raw answer, ``budget`` charged; ``None``
    (nothing charged) when the request failed or its stream is unusable (logged, naming
    ``where``: the sandbox): check one by one."""
    if raw.exit_code != 0 or raw.stdout_truncated:
        return None
    trial = CaptureBudget(budget.total_bytes)
    trial.charged = budget.charged
    try:
        results = parse(raw.stdout, checks, sent, trial, limits)
    except StreamError as error:
        log.warning("collect stream of %s unusable (%s); checking one by one", where, error)
        return None
    budget.charged = trial.charged
    return results


def parse(output: bytes, checks: Sequence[CaptureCheck | ListingCheck], sent: Request,
          budget: CaptureBudget, limits: Limits) -> tuple[Result, ...]:
    """The checks' results from the stream, in order.

    Raises:
        StreamError: the stream does not follow the script's framing.
    """
    reader = _Reader(output, sent.nonce)
    results: list[Result] = []
    for index, check in enumerate(checks):
        if index in sent.rejected:
            results.append(_refused(check, sent.rejected[index], limits.listing_entries))
        elif isinstance(check, ListingCheck):
            results.append(_listing(reader, index, check, sent.paths[index], limits))
        else:
            results.append(_capture(reader, index, check, budget))
    return tuple(results)


def _capture(reader: _Reader, index: int, check: CaptureCheck,
             budget: CaptureBudget) -> FileCapture:
    status, rest = reader.header(index)
    limit = budget.limit_for(check.max_size_bytes)
    if status != "file":
        if status not in _NOT_CAPTURED:
            raise StreamError(f"unknown status {status!r}")
        return budget.record(check, check.path, FileRead(False, error=_NOT_CAPTURED[status]),
                             limit)
    size = count(rest)
    if size is None:
        raise StreamError("bad size")
    content = reader.take(min(size, max(limit, 0)))
    return budget.record(check, check.path, FileRead(True, size=size, content=content), limit)


def _listing(reader: _Reader, index: int, check: ListingCheck, path: str,
             limits: Limits) -> DirectoryListing:
    status, _ = reader.header(index)
    if status != "list":
        raise StreamError(f"expected a listing, got {status!r}")
    body = reader.until(f"@{reader.nonce} {index} end\n".encode())
    max_entries = limits.listing_entries
    if body.startswith(f"@{reader.nonce} {index} nodir\n".encode()):
        return DirectoryListing(key=check.key, path=check.path, entries=(),
                                max_entries=max_entries, error="cannot open directory")
    listing = transfer.parse_listing(body, path, max_entries, depth=limits.tree_depth)
    return DirectoryListing(key=check.key, path=check.path, entries=listing.entries,
                            max_entries=max_entries, truncated=listing.truncated,
                            error=listing.error, dropped=listing.dropped,
                            capped=listing.capped)


def _refused(check: CaptureCheck | ListingCheck, why: str, max_entries: int) -> Result:
    if isinstance(check, ListingCheck):
        return DirectoryListing(key=check.key, path=check.path, entries=(),
                                max_entries=max_entries, error=why)
    return FileCapture(key=check.key, path=check.path, exists=False, error=why)


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
