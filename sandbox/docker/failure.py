"""Sorting Docker's failures: ours (retry / don't) or the candidate's (a result).

:func:`classify` maps an exception raised by the docker SDK to a
:class:`~sandbox.errors.SandboxError`; :func:`start_error_is_candidates` decides whether a
process that runc could not start is the candidate's doing.

Deliberately left unmatched (they fall through to ``SandboxUnavailable``, i.e. retry):
500s with messages we have not seen, and timeouts talking to the daemon. A retry of a
request that can never work costs one delivery; failing a run that would have worked on
another worker costs a scorecard.
"""

from __future__ import annotations

from typing import Final

import docker.errors

from evalfleet.sandbox.errors import SandboxConfigError, SandboxError, SandboxUnavailable

#: (HTTP status or None, message fragment) → error type; first match wins.
SIGNATURES: Final[tuple[tuple[int | None, str, type[SandboxError]], ...]] = (
    (404, "no such image", SandboxConfigError),
    (404, "pull access denied", SandboxConfigError),
    (400, "invalid", SandboxConfigError),
    (400, "minimum memory limit", SandboxConfigError),
    (400, "range of cpus", SandboxConfigError),
    (404, "no such container", SandboxUnavailable),
    (409, "is not running", SandboxUnavailable),
    (409, "is paused", SandboxUnavailable),
    (409, "removal of container", SandboxUnavailable),
    (None, "", SandboxUnavailable),
)

#: Fragments of runc's "could not start" message that the candidate caused.
CANDIDATE_START_ERRORS: Final[tuple[str, ...]] = (
    "chdir to cwd",  # the workdir the candidate should have made does not exist
    "resource temporarily unavailable",  # the candidate used up the pids limit
    "in sandbox: try again",  # gVisor's words for it: a fork bomb's threads linger a while
    "no such file or directory",  # the program the candidate named is missing
    "permission denied",
)


def classify(error: BaseException, *, what: str, sandbox_id: str | None = None) -> SandboxError:
    """The :class:`SandboxError` to raise for a docker SDK exception during ``what``."""
    if isinstance(error, docker.errors.ImageNotFound):
        return SandboxConfigError(f"{what}: image not found: {error}", sandbox_id=sandbox_id)
    if isinstance(error, OSError) and not isinstance(error, docker.errors.APIError):
        return SandboxUnavailable(f"{what}: Docker engine unreachable: {error}",
                                  sandbox_id=sandbox_id)  # requests' errors are OSErrors
    status = getattr(getattr(error, "response", None), "status_code", None)
    message = str(error).lower()
    for code, fragment, kind in SIGNATURES:
        if (code is None or code == status) and fragment in message:
            return kind(f"{what}: {error}", sandbox_id=sandbox_id)
    return SandboxUnavailable(f"{what}: {error}", sandbox_id=sandbox_id)


def start_error_is_candidates(message: str) -> bool:
    """Whether runc's failure to start a process is the candidate's doing."""
    lowered = message.lower()
    return any(fragment in lowered for fragment in CANDIDATE_START_ERRORS)
