"""Cold sandboxes: create and start a hardened container for one run."""

from __future__ import annotations

import contextlib
import time
from typing import Any

import docker.errors

from sandbox.docker.driver import DockerSandbox
from sandbox.docker.failure import classify
from sandbox.docker.limits import Ownership, create_kwargs
from sandbox.profile import Profile

#: Seconds past a sandbox's wall limit after which the reaper may remove it anyway.
DEADLINE_SLACK_S = 60.0


class DockerFactory:
    """Creates one container per :meth:`acquire`; the caller closes the sandbox."""

    def __init__(self, client: Any, *, worker: str,
                 extra_labels: dict[str, str] | None = None) -> None:
        self.client = client
        self.worker = worker
        self.extra_labels = dict(extra_labels or {})

    def acquire(self, profile: Profile, *, run_id: str) -> DockerSandbox:
        """Create and start a container for ``run_id``.

        Raises:
            SandboxConfigError: the image is missing or the limits are refused.
            SandboxUnavailable: the engine is not there.
        """
        deadline = time.time() + profile.limits.wall_timeout_s + DEADLINE_SLACK_S
        container = self.start(profile, Ownership(self.worker, run_id, deadline))
        return DockerSandbox(self.client, container, profile, run_id=run_id)

    def start(self, profile: Profile, owner: Ownership) -> Any:
        """Create and start a container (removed again if starting fails).

        Raises:
            SandboxConfigError: the image is missing or the limits are refused.
            SandboxUnavailable: the engine is not there.
        """
        try:
            container = self.client.containers.create(
                **create_kwargs(profile, owner, self.extra_labels))
        except (docker.errors.DockerException, OSError) as error:
            raise classify(error, what=f"create from {profile.image}") from error
        try:
            container.start()
        except (docker.errors.DockerException, OSError) as error:
            _remove_quietly(container)
            raise classify(error, what="start", sandbox_id=container.id) from error
        return container


def _remove_quietly(container: Any) -> None:
    with contextlib.suppress(docker.errors.DockerException, OSError):  # the reaper retries
        container.remove(force=True)
