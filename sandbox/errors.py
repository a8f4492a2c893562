"""The sandbox's exceptions: *our* failures, never the candidate's.

A candidate's non-zero exit, timeout, truncated output or OOM kill is a field of a result
(:class:`sandbox.results.ExecResult`). Exceptions here say whose fault something is, so
the worker can decide whether to retry:

``SandboxError``
    ``SandboxUnavailable``  engine down, container vanished, engine call failed: retry.
    ``SandboxConfigError``  image missing, bad limits, bad paths, seed too large: don't.
"""

from __future__ import annotations


class SandboxError(Exception):
    """Base of every sandbox exception; ``str()`` names the container or image if known."""

    def __init__(self, message: str, *, sandbox_id: str | None = None) -> None:
        self.sandbox_id = sandbox_id
        suffix = f" (sandbox {sandbox_id[:12]})" if sandbox_id else ""
        super().__init__(f"{message}{suffix}")


class SandboxUnavailable(SandboxError):
    """The engine or the container is not there (transient): retry the run."""


class SandboxConfigError(SandboxError):
    """The request cannot work as given (image missing, bad limits or paths): don't retry."""
