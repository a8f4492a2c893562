"""What goes into a sandbox: :class:`Command` to run and :class:`SeedFile` to write."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Command:
    """One command; ``None`` fields take the profile's defaults."""

    argv: tuple[str, ...] | str
    """An argv tuple, or a shell string run as ``sh -c``."""
    stdin: bytes = b""
    env: Mapping[str, str] = field(default_factory=dict)
    workdir: str | None = None
    timeout_s: float | None = None
    output_cap_bytes: int | None = None
    """Cap per stream (stdout, stderr), enforced while streaming."""
    user: str | None = None
    """Numeric ``uid:gid`` to run as; ``None`` is the candidate's (the profile's ``user``).
    A command with a user of its own first stops every process left in the sandbox."""

    def as_argv(self) -> tuple[str, ...]:
        """The argv to execute (a shell string becomes ``sh -c``)."""
        return ("sh", "-c", self.argv) if isinstance(self.argv, str) else self.argv


@dataclass(frozen=True)
class SeedFile:
    """A file to write into the workspace before the candidate's commands run."""

    path: str
    """Relative to the workspace, or absolute inside it; no ``..``."""
    content: bytes | str
    mode: int = 0o644

    @property
    def data(self) -> bytes:
        """The content as bytes (text is UTF-8 encoded)."""
        return self.content.encode() if isinstance(self.content, str) else self.content
