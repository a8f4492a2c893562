"""A store in a local directory: each key a file (written to a temporary name, flushed and
renamed into place, so a reader never sees half an object)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import SplitResult, unquote

from .errors import StoreError


@dataclass(frozen=True)
class FileStore:
    """Keys as files under ``root``."""

    root: Path

    @classmethod
    def from_url(cls, url: SplitResult) -> FileStore:
        """``file:///a/directory``.

        Raises:
            ValueError: the URL names a host or no directory.
        """
        if url.netloc not in {"", "localhost"} or not url.path:
            raise ValueError(f"archive URL file://{url.netloc}{url.path}: give a local "
                             "directory, file:///var/lib/evalfleet/archive")
        return cls(Path(unquote(url.path)))

    def put(self, key: str, data: bytes) -> None:
        """Write ``data`` at ``key``, atomically and durably.

        Raises:
            StoreError: the directory cannot be written (missing rights, disk full).
        """
        path = self._path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile(dir=path.parent, prefix=".put-",
                                             delete=False) as part:
                part.write(data)
                part.flush()
                os.fsync(part.fileno())
            os.replace(part.name, path)
        except OSError as err:
            raise StoreError(f"{self.describe()}: cannot write {key}: {err}") from err

    def get(self, key: str) -> bytes | None:
        """The bytes at ``key`` (None: no such file).

        Raises:
            StoreError: the file exists and cannot be read.
        """
        try:
            return self._path(key).read_bytes()
        except FileNotFoundError:
            return None
        except OSError as err:
            raise StoreError(f"{self.describe()}: cannot read {key}: {err}") from err

    def keys(self, prefix: str) -> Iterator[str]:
        """The keys under ``prefix`` (a directory's files, sorted; temporaries skipped).

        Raises:
            StoreError: the directory cannot be listed.
        """
        folder, _, start = prefix.rpartition("/")
        base = self.root / folder if folder else self.root
        try:
            names = sorted(p.name for p in base.iterdir() if p.is_file())
        except FileNotFoundError:
            return
        except OSError as err:
            raise StoreError(f"{self.describe()}: cannot list {prefix}: {err}") from err
        yield from (f"{folder}/{n}" if folder else n for n in names
                    if n.startswith(start) and not n.startswith(".put-"))

    def prepare(self) -> None:
        """Create the directory.

        Raises:
            StoreError: it cannot be created.
        """
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise StoreError(f"{self.describe()}: cannot create it: {err}") from err

    def link(self, key: str, expires_s: int) -> str | None:
        """No link: a directory on the worker's host is nothing a platform can fetch."""
        return None

    def describe(self) -> str:
        return f"file://{self.root}"

    def _path(self, key: str) -> Path:
        """The file of ``key`` (its components are never ``.`` or ``..``: :mod:`.layout`).

        Raises:
            StoreError: a key that would leave the root.
        """
        parts = key.split("/")
        if any(p in {"", ".", ".."} for p in parts):
            raise StoreError(f"{self.describe()}: refused key {key!r}")
        return self.root.joinpath(*parts)
