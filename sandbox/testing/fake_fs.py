"""The in-memory file tree behind the fake sandbox: files, directories, symlinks."""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field

from evalfleet.sandbox.results import ListingEntry


@dataclass
class FakeFS:
    """Absolute paths → contents; links are stored, never followed by the host side."""

    files: dict[str, bytes] = field(default_factory=dict)
    modes: dict[str, int] = field(default_factory=dict)
    links: dict[str, str] = field(default_factory=dict)
    dirs: set[str] = field(default_factory=lambda: {"/", "/workspace", "/tmp", "/etc"})
    capacity: int = 1 << 62

    def kind(self, path: str) -> str | None:
        """``file``, ``dir``, ``link`` or ``None`` (the path itself, links not followed)."""
        if path in self.links:
            return "link"
        if path in self.files:
            return "file"
        return "dir" if path in self.dirs else None

    def resolve(self, path: str, hops: int = 8) -> str:
        """Follow links inside the tree (what a process in the sandbox would see)."""
        while path in self.links and hops:
            path = posixpath.normpath(posixpath.join(posixpath.dirname(path), self.links[path]))
            hops -= 1
        return path

    def read(self, path: str) -> bytes | None:
        """Content of a file, following links as a sandboxed ``cat`` would."""
        return self.files.get(self.resolve(path))

    def write(self, path: str, data: bytes, *, append: bool = False, mode: int = 0o644) -> bool:
        """Create or replace (or append to) a file; ``False`` when the space is used up."""
        path = self.resolve(path)
        new = (self.files.get(path, b"") if append else b"") + data
        if self.used() - len(self.files.get(path, b"")) + len(new) > self.capacity:
            return False
        self.mkdir(posixpath.dirname(path))
        self.files[path] = new
        self.modes.setdefault(path, mode)
        return True

    def mkdir(self, path: str) -> None:
        """``mkdir -p``."""
        while path not in self.dirs:
            self.dirs.add(path)
            path = posixpath.dirname(path)

    def remove(self, path: str) -> None:
        """``rm -f`` of one file or link."""
        self.files.pop(path, None)
        self.links.pop(path, None)

    def used(self) -> int:
        """Bytes held by all files."""
        return sum(len(data) for data in self.files.values())

    def walk(self, root: str) -> list[ListingEntry]:
        """Every entry strictly below ``root``, sorted by path."""
        prefix = root.rstrip("/") + "/"
        entries = [ListingEntry(path=p, size=len(d), is_dir=False)
                   for p, d in self.files.items() if p.startswith(prefix)]
        entries += [ListingEntry(path=p, size=len(t), is_dir=False)
                    for p, t in self.links.items() if p.startswith(prefix)]
        entries += [ListingEntry(path=p, size=0, is_dir=True)
                    for p in self.dirs if p.startswith(prefix)]
        return sorted(entries, key=lambda entry: entry.path)
