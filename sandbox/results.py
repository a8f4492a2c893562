"""Frozen results of sandbox operations.

Everything the candidate can cause (non-zero exit, timeout, truncation, OOM kill, a file
that is missing or is a link) is a field here, never an exception.
"""

from __future__ import annotations

from dataclasses import dataclass


def text(data: bytes) -> str:
    """Decode captured bytes as text (invalid UTF-8 becomes U+FFFD)."""
    return data.decode("utf-8", errors="replace")


def count(value: str) -> int | None:
    """A non-negative count a sandbox printed, in ASCII digits (``None`` for anything else:
    ``str.isdigit`` takes "²", which ``int`` refuses, and a name the candidate chose can
    put one where a size goes)."""
    if not (value.isascii() and value.isdigit() and len(value) <= 19):
        return None
    return int(value)


@dataclass(frozen=True)
class ExecResult:
    """What one command did."""

    exit_code: int | None
    """Exit status; ``None`` when the command never started or its status was lost."""
    stdout: bytes = b""
    stderr: bytes = b""
    timed_out: bool = False
    """The command's own timeout (or the sandbox's wall deadline) ended it."""
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    duration_s: float = 0.0
    oom_killed: bool = False
    """The kernel's OOM killer ended a process of this command (memory limit)."""
    error: str | None = None
    """Why the command could not be started at all (e.g. its working directory is missing)."""

    @property
    def truncated(self) -> bool:
        """Either output stream was cut at its cap."""
        return self.stdout_truncated or self.stderr_truncated

    @property
    def ok(self) -> bool:
        """Started, finished in time and exited 0."""
        return self.exit_code == 0 and not self.timed_out and self.error is None


@dataclass(frozen=True)
class FileRead:
    """A driver's raw read of one file: full ``size``, at most ``limit`` bytes of content."""

    exists: bool
    size: int = 0
    content: bytes = b""
    error: str | None = None


@dataclass(frozen=True)
class FileCapture:
    """A ``file_capture`` check's result under the §7.2 caps."""

    key: str
    path: str
    exists: bool
    size: int = 0
    """Full original byte length, even when ``content`` was cut."""
    content: bytes | None = None
    truncated: bool = False
    error: str | None = None
    """Why an existing-looking path was not captured (a link, ``..``, not a regular file)."""


@dataclass(frozen=True)
class ListingEntry:
    """One entry of a directory listing (AgentClash's ``{path, size, is_dir}``)."""

    path: str
    size: int
    is_dir: bool


@dataclass(frozen=True)
class Listing:
    """A driver's raw listing: entries below ``path``, at most ``max_entries`` of them."""

    entries: tuple[ListingEntry, ...] = ()
    truncated: bool = False
    """Not every entry is here: more than the cap, ``dropped`` ones, an output cut short."""
    error: str | None = None
    """Why the listing failed (the entries, if any, are what it gave before)."""
    dropped: int = 0
    """Entries the sandbox printed that were left out (a line over 8 KiB)."""
    capped: bool = False
    """The entry cap stopped the listing (more lay past it)."""


@dataclass(frozen=True)
class DirectoryListing:
    """A ``directory_listing`` check's result."""

    key: str
    path: str
    entries: tuple[ListingEntry, ...]
    max_entries: int
    truncated: bool = False
    """Not every entry is listed: the cap was hit, entries were ``dropped``, or the
    listing's output was cut short."""
    error: str | None = None
    """Why the listing failed (missing path, not a directory, rejected path, its output
    past its cap, a timeout); its entries are what it gave before, if anything."""
    dropped: int = 0
    """Entries left out because the sandbox's line for them was over 8 KiB."""
    capped: bool = False
    """The entry cap stopped the listing (more lay past it). Not in the event: its
    ``truncated`` says as much to AgentClash's scoring."""
