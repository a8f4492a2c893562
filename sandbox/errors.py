"""The sandbox's exceptions: *our* failures, never the candidate's.

A candidate's non-zero exit, timeout, truncated output or OOM kill is a field of a result
(:class:`sandbox.results.ExecResult`). Exceptions here say whose fault something is, so
the worker can decide whether to retry:

``SandboxError``
    ``SandboxUnavailable``  engine down, container vanished, engine call failed: retry.
    ``SandboxConfigError``  image missing, bad limits, bad paths, seed too large: don't.
    ``SeedRefused``         ``tar`` ran in the sandbox and could not write the files (the
                            workspace full, something in the way). For the submission's
                            own files, :func:`~sandbox.evaluation.plans.run_plan` records it
                            (:attr:`~sandbox.plan.PlanResult.files_refused`: the
                            candidate's loss); for the pack's hidden test files, the
                            candidate's leftovers are to blame, so the tests count as
                            failed (a result).
"""

from __future__ import annotations


class SandboxError(Exception):
    """Base of every sandbox exception; ``str()`` names the container or image if known."""

    def __init__(self, message: str, *, sandbox_id: str | None = None) -> None:
        self.sandbox_id = sandbox_id
        self.detail = message
        """The message without the sandbox's id."""
        suffix = f" (sandbox {sandbox_id[:12]})" if sandbox_id else ""
        super().__init__(f"{message}{suffix}")


class SandboxUnavailable(SandboxError):
    """The engine or the container is not there (transient): retry the run."""


class SandboxConfigError(SandboxError):
    """The request cannot work as given (image missing, bad limits or paths): don't retry."""


class SeedRefused(SandboxError):
    """``tar`` ran in the sandbox but could not write the files (no space, a path in the
    way): what the candidate left decided it, not the engine."""
