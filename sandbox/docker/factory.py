"""Cold sandboxes: create and start a hardened container for one run."""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from typing import Any

import docker.errors

from sandbox.docker.channel import PROTOCOL, Channel
from sandbox.docker.driver import DockerSandbox
from sandbox.docker.failure import classify
from sandbox.docker.limits import Ownership, create_kwargs
from sandbox.profile import Profile

log = logging.getLogger(__name__)

#: Seconds past a sandbox's wall limit after which the reaper may remove it anyway.
DEADLINE_SLACK_S = 60.0
#: Image label naming the supervisor's path in the image (``sandbox/images/supervisor``).
LABEL_SUPERVISOR = "evalfleet.supervisor"
#: Image label with the version of the supervisor's protocol; an image whose supervisor
#: speaks another version than :data:`sandbox.docker.channel.PROTOCOL` is driven by exec.
LABEL_PROTOCOL = "evalfleet.supervisor.protocol"


class DockerFactory:
    """Creates one container per :meth:`acquire`; the caller closes the sandbox.

    An image labelled :data:`LABEL_SUPERVISOR` is driven through its supervisor
    (:mod:`sandbox.docker.channel`); any other image, or every image when ``supervise`` is
    false, through ``docker exec``. Labels are read once per image name and process.
    """

    def __init__(self, client: Any, *, worker: str,
                 extra_labels: dict[str, str] | None = None, supervise: bool = True) -> None:
        self.client = client
        self.worker = worker
        self.extra_labels = dict(extra_labels or {})
        self.supervise = supervise
        self._supervisors: dict[str, str | None] = {}
        self._lock = threading.Lock()

    def acquire(self, profile: Profile, *, run_id: str) -> DockerSandbox:
        """Create and start a container for ``run_id``.

        Raises:
            SandboxConfigError: the image is missing or the limits are refused.
            SandboxUnavailable: the engine is not there.
        """
        deadline = time.time() + profile.limits.wall_timeout_s + DEADLINE_SLACK_S
        container, channel = self.start(profile, Ownership(self.worker, run_id, deadline))
        return DockerSandbox(self.client, container, profile, run_id=run_id, channel=channel)

    def start(self, profile: Profile, owner: Ownership) -> tuple[Any, Channel | None]:
        """Create and start a container (removed again if starting fails), attached to its
        supervisor when it has one.

        Raises:
            SandboxConfigError: the image is missing or the limits are refused.
            SandboxUnavailable: the engine is not there.
        """
        supervisor = self.supervisor(profile.image)
        try:
            container = self.client.containers.create(
                **create_kwargs(profile, owner, self.extra_labels, supervisor))
        except (docker.errors.DockerException, OSError) as error:
            raise classify(error, what=f"create from {profile.image}") from error
        try:
            container.start()
            channel = Channel.attach(self.client.api, container.id) if supervisor else None
        except (docker.errors.DockerException, OSError) as error:
            _remove_quietly(container)
            raise classify(error, what="start", sandbox_id=container.id) from error
        return container, channel

    def supervisor(self, image: str) -> str | None:
        """The supervisor's path in ``image``, or ``None`` (``exec`` it is).

        Raises:
            SandboxConfigError: the image is missing.
            SandboxUnavailable: the engine is not there.
        """
        if not self.supervise:
            return None
        with self._lock:
            if image in self._supervisors:
                return self._supervisors[image]
        try:
            labels = self.client.images.get(image).labels or {}
        except (docker.errors.DockerException, OSError) as error:
            raise classify(error, what=f"inspect {image}") from error
        path = labels.get(LABEL_SUPERVISOR) or None
        if path and labels.get(LABEL_PROTOCOL) != PROTOCOL:
            log.warning("%s: supervisor protocol %r is not %r; driving it through exec",
                        image, labels.get(LABEL_PROTOCOL), PROTOCOL)
            path = None
        with self._lock:
            self._supervisors[image] = path
        return path


def _remove_quietly(container: Any) -> None:
    with contextlib.suppress(docker.errors.DockerException, OSError):  # the reaper retries
        container.remove(force=True)
