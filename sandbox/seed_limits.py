"""What one seeding of the workspace can hold, checked on the host before a sandbox starts.

The kernel refuses a name over :data:`NAME_MAX` bytes and a path over :data:`PATH_MAX`
bytes with its NUL; no path can be both a file and a directory (``a`` and ``a/b``); a
profile caps one seeding at ``seed_files`` entries (the files and the directories their
paths imply) and ``seed_bytes`` bytes, and one file at ``fsize_bytes``. :func:`unholdable`
names the first file that breaks one of these. What passes can still fail in the sandbox
(the workspace full, say): the driver then raises :class:`~sandbox.errors.SeedRefused`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from evalfleet.sandbox.command import SeedFile
from evalfleet.sandbox.paths import relative_to, workspace_path
from evalfleet.sandbox.profile import Limits

#: The longest name (one path component) Linux file systems take, in bytes.
NAME_MAX = 255
#: The kernel's longest path, in bytes with its terminating NUL.
PATH_MAX = 4096
#: The most characters of a path a reason shows (a longer one is cut, its length said).
SHOWN = 300


@dataclass(frozen=True)
class Unholdable:
    """A seed file the workspace cannot hold, and why."""

    path: str
    """The file's path as given."""
    why: str

    def __str__(self) -> str:
        return f"`{shown(self.path)}` {self.why}"


def unholdable(files: Sequence[SeedFile], workspace: str, limits: Limits) -> Unholdable | None:
    """The first of ``files`` that one seeding of ``workspace`` cannot hold, or ``None``.

    Raises:
        PathRejected: a path breaks the rules of :mod:`sandbox.paths` (``..``, NUL, empty,
            outside the workspace).
    """
    tally = _Tally(limits)
    for file in files:
        name = relative_to(workspace_path(file.path, workspace), workspace)
        why = _too_long(name, workspace) or tally.add(name, file)
        if why:
            return Unholdable(file.path, why)
    return None


def _too_long(name: str, workspace: str) -> str:
    """Why the kernel cannot take ``name`` (relative to ``workspace``), or ``""``."""
    longest = max(_size(part) for part in name.split("/"))
    if longest > NAME_MAX:
        return (f"has a name of {longest} bytes, and a name may have at most {NAME_MAX} "
                "(NAME_MAX)")
    size = _size(f"{workspace}/{name}") + 1
    if size > PATH_MAX:
        return (f"is a path of {size} bytes in the sandbox (with its NUL), and a path may "
                f"have at most {PATH_MAX} (PATH_MAX)")
    return ""


@dataclass
class _Tally:
    """The entries and bytes of one seeding so far, file by file."""

    limits: Limits
    files: dict[str, str] = field(default_factory=dict)
    """Name in the workspace → the first path given for it."""
    directories: dict[str, str] = field(default_factory=dict)
    """Directory in the workspace → the first path given below it."""
    bytes: int = 0

    def add(self, name: str, file: SeedFile) -> str:
        """Count ``file`` (at ``name``); why it cannot be held, or ``""``."""
        clash = self._clash(name)
        if clash:
            return clash
        for parent in parents(name):
            self.directories.setdefault(parent, file.path)
        self.files.setdefault(name, file.path)
        self.bytes += len(file.data)
        return self._over(file)

    def _clash(self, name: str) -> str:
        if name in self.directories:
            return (f"would be both a file and a directory: `{shown(self.directories[name])}`"
                    " lies below it")
        above = next((self.files[p] for p in parents(name) if p in self.files), None)
        if above is not None:
            return (f"lies below `{shown(above)}`, a file: that path would be both a file "
                    "and a directory")
        return ""

    def _over(self, file: SeedFile) -> str:
        limits = self.limits
        if len(self.files) + len(self.directories) > limits.seed_files:
            return (f"makes the files more than {limits.seed_files} entries (files and "
                    "their directories), the profile's seed_files")
        if self.bytes > limits.seed_bytes:
            return f"makes the files more than {limits.seed_bytes} bytes, the profile's seed_bytes"
        if len(file.data) > limits.fsize_bytes:
            return (f"is {len(file.data)} bytes, more than the {limits.fsize_bytes} a file may "
                    "have (fsize_bytes)")
        return ""


def entries(names: Iterable[str]) -> int:
    """How many entries the relative ``names`` make: each, and each directory above it."""
    made = {parent for name in names for parent in (*parents(name), name)}
    return len(made)


def parents(name: str) -> list[str]:
    """The directories above the relative ``name``, outermost first (``a``, ``a/b``)."""
    parts = name.split("/")[:-1]
    return ["/".join(parts[:index]) for index in range(1, len(parts) + 1)]


def shown(path: str) -> str:
    """``path`` for a reason: at most :data:`SHOWN` characters, then its size in bytes."""
    if len(path) <= SHOWN:
        return path
    return f"{path[:SHOWN]}… ({_size(path)} bytes)"


def _size(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))
