"""Post-execution checks and the AgentClash capture caps (docs/scoring.md §7.1–7.2).

The numbers, exactly as AgentClash's worker applies them:

- per file: ``max_size_bytes`` when positive, else 1 MiB (it may exceed 1 MiB);
- per run: 10 MiB, charged with each existing file's **full** size, not the bytes kept;
- the cap of one file is ``min(per-file cap, 10 MiB - charged so far)``; when that is
  ``<= 0`` the content is ``""`` and ``truncated`` is true; when the file is longer than
  the cap, the content is its first ``cap`` bytes (a byte cut) and ``truncated`` is true.
"""

from __future__ import annotations

from dataclasses import dataclass

from evalfleet.sandbox.results import FileCapture, FileRead

#: AgentClash's DefaultMaxFileSizeBytes.
DEFAULT_MAX_FILE_BYTES = 1_048_576
#: AgentClash's DefaultMaxTotalCaptureBytes.
DEFAULT_MAX_TOTAL_BYTES = 10_485_760


@dataclass(frozen=True)
class CaptureCheck:
    """A ``file_capture`` post-execution check."""

    key: str
    path: str
    max_size_bytes: int | None = None
    """Per-file cap; ``None`` or ``0`` means the 1 MiB default."""


@dataclass(frozen=True)
class ListingCheck:
    """A ``directory_listing`` post-execution check (``recursive`` is not used, as in §7.2)."""

    key: str
    path: str
    recursive: bool = False


#: A post-execution check, in declaration order.
Check = CaptureCheck | ListingCheck


class CaptureBudget:
    """The per-run capture budget; one per run, shared by every capture in order."""

    def __init__(self, total_bytes: int = DEFAULT_MAX_TOTAL_BYTES) -> None:
        self.total_bytes = total_bytes
        self.charged = 0

    @property
    def remaining(self) -> int:
        """Bytes left before the run's total cap (may be negative)."""
        return self.total_bytes - self.charged

    @staticmethod
    def per_file(max_size_bytes: int | None) -> int:
        """A file's own cap: ``max_size_bytes`` when positive, else 1 MiB."""
        return max_size_bytes if max_size_bytes and max_size_bytes > 0 else (
            DEFAULT_MAX_FILE_BYTES)

    def limit_for(self, max_size_bytes: int | None) -> int:
        """The cap of the next file: ``min(per-file cap, remaining)`` (may be ``<= 0``)."""
        return min(self.per_file(max_size_bytes), self.remaining)

    def record(self, check: CaptureCheck, path: str, read: FileRead, limit: int) -> FileCapture:
        """Turn a driver's read (made with ``limit``) into the capped capture; charge it."""
        if not read.exists:
            return FileCapture(key=check.key, path=path, exists=False, error=read.error)
        self.charged += read.size
        if limit <= 0:
            return FileCapture(key=check.key, path=path, exists=True, size=read.size,
                               content=b"", truncated=True)
        truncated = read.size > limit
        return FileCapture(key=check.key, path=path, exists=True, size=read.size,
                           content=read.content[:limit], truncated=truncated)
