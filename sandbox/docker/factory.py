"""Cold sandboxes: create and start a hardened container for one run."""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from dataclasses import dataclass
from typing import Any

import docker.errors

from evalfleet.sandbox.docker.channel import SUPPORTED, Channel
from evalfleet.sandbox.docker.driver import DockerSandbox
from evalfleet.sandbox.docker.failure import classify
from evalfleet.sandbox.docker.labels import LABEL_PROTOCOL, LABEL_SUPERVISOR
from evalfleet.sandbox.docker.lifeline import Lifeline, Line
from evalfleet.sandbox.docker.limits import Ownership, create_kwargs
from evalfleet.sandbox.docker.reuse import Reuse
from evalfleet.sandbox.docker.runtimes import Runtimes
from evalfleet.sandbox.profile import Profile

log = logging.getLogger(__name__)

#: Seconds past a sandbox's wall limit after which the reaper may remove it anyway.
DEADLINE_SLACK_S = 60.0
#: The first protocol whose supervisor can reset a sandbox for reuse.
RESET_PROTOCOL = 3
#: The first protocol whose supervisor binary collects file captures (``--collect``).
COLLECT_PROTOCOL = 4
#: The first protocol whose supervisor writes a request's seed records itself.
SEED_PROTOCOL = 5
#: The first protocol whose supervisor queues requests sent ahead.
QUEUE_PROTOCOL = 6
#: ``HOME`` of every step when the image's ``ENV`` sets none (Docker's own fallback).
DEFAULT_HOME = "/"
#: What every step's environment starts from, so that the same submission behaves the same
#: in every run: the time zone, the locale, Python's hash seed. The image's ``ENV``, the
#: profile's and the pack's ``env_vars`` may set their own.
DETERMINISM = (("TZ", "UTC"), ("LANG", "C.UTF-8"), ("LC_ALL", "C.UTF-8"),
               ("PYTHONHASHSEED", "0"))


@dataclass(frozen=True)
class ImageFacts:
    """What the factory reads from an image once: how to drive it, and its environment."""

    supervisor: str | None
    """The supervisor's path, or ``None`` (``exec`` it is)."""
    id: str = ""
    """The image's id (``sha256:...``, its config digest): what exactly ran."""
    env: tuple[tuple[str, str], ...] = ()
    """The image's ``ENV`` (plus ``HOME``): the base of every step's environment, which the
    supervisor does not inherit from its own (it starts with none, see its source)."""
    protocol: int = 0
    """The supervisor's protocol version (0 without one)."""

    @property
    def build(self) -> str:
        """The supervisor as a result's provenance names it (its binary is a layer of the
        image, so :attr:`id` pins it exactly): name and protocol, ``""`` without one."""
        if self.supervisor is None:
            return ""
        return f"{self.supervisor.rsplit('/', 1)[-1]} protocol {self.protocol}"

    @property
    def resets(self) -> bool:
        """Whether the image's supervisor can reset a sandbox for reuse."""
        return self.supervisor is not None and self.protocol >= RESET_PROTOCOL

    @property
    def collector(self) -> str | None:
        """The supervisor's path when it can collect file captures (else ``None``)."""
        return self.supervisor if self.protocol >= COLLECT_PROTOCOL else None

    @property
    def seeds(self) -> bool:
        """Whether the image's supervisor writes a request's seed records itself."""
        return self.supervisor is not None and self.protocol >= SEED_PROTOCOL

    @property
    def queues(self) -> bool:
        """Whether the image's supervisor queues requests sent ahead."""
        return self.supervisor is not None and self.protocol >= QUEUE_PROTOCOL


def image_env(config_env: list[str] | None) -> tuple[tuple[str, str], ...]:
    """:data:`DETERMINISM`, then the ``KEY=VALUE`` lines of an image's config, with
    ``HOME`` defaulted."""
    pairs = dict(DETERMINISM)
    pairs.update(line.partition("=")[::2] for line in config_env or [] if "=" in line)
    pairs.setdefault("HOME", DEFAULT_HOME)
    return tuple(pairs.items())


class DockerFactory:
    """Creates one container per :meth:`acquire`; the caller closes the sandbox.

    An image labelled :data:`LABEL_SUPERVISOR` is driven through its supervisor
    (:mod:`sandbox.docker.channel`); any other image, or every image when ``supervise`` is
    false, through ``docker exec``. Labels and ``ENV`` are read once per image name and
    process, the engine's runtimes once per process.
    """

    def __init__(self, client: Any, *, worker: str,
                 extra_labels: dict[str, str] | None = None, supervise: bool = True) -> None:
        self.client = client
        self.worker = worker
        self.extra_labels = dict(extra_labels or {})
        self.supervise = supervise
        self.runtimes = Runtimes(client)
        self._images: dict[str, ImageFacts] = {}
        self._lock = threading.Lock()

    def acquire(self, profile: Profile, *, run_id: str) -> DockerSandbox:
        """Create and start a container for ``run_id``.

        Raises:
            SandboxConfigError: the image is missing or the limits are refused.
            SandboxUnavailable: the engine is not there.
        """
        deadline = time.time() + profile.limits.wall_timeout_s + DEADLINE_SLACK_S
        container, line = self.start(profile, Ownership(self.worker, run_id, deadline))
        return self.sandbox(container, line, profile, run_id=run_id)

    def sandbox(self, container: Any, line: Line | None, profile: Profile, *,
                run_id: str, reused: Reuse | None = None) -> DockerSandbox:
        """The driver over a started container of ``profile`` (cold, warm or reused)."""
        image = self.image(profile.image)
        return DockerSandbox(self.client, container, profile, run_id=run_id, line=line,
                             base_env=dict(image.env), image_id=image.id,
                             runtime=self.runtimes.name(profile.runtime),
                             gvisor=self.runtimes.gvisor(profile.runtime), reused=reused,
                             collector=image.collector, seeds=image.seeds,
                             queues=image.queues, supervisor=image.build)

    def reusable(self, profile: Profile) -> bool:
        """Whether ``profile``'s sandboxes are started to serve several runs: the profile
        asks for it, has no network, and its image's supervisor can reset (protocol 3 on).

        Raises:
            SandboxConfigError: the image is missing.
            SandboxUnavailable: the engine is not there.
        """
        return (profile.reusable and self.supervise and profile.hardening.network_mode == "none"
                and self.image(profile.image).resets)

    def start(self, profile: Profile, owner: Ownership) -> tuple[Any, Line]:
        """Create and start a container (removed again if starting fails), and the worker's
        line to it: attached to its supervisor, or to its keep-alive's stdin
        (:mod:`sandbox.docker.lifeline`).

        Raises:
            SandboxConfigError: the image is missing or the limits are refused.
            SandboxUnavailable: the engine is not there.
        """
        supervisor = self.supervisor(profile.image)
        kwargs = create_kwargs(profile, owner, self.extra_labels, supervisor,
                               gvisor=self.runtimes.gvisor(profile.runtime),
                               reusable=owner.pooled and self.reusable(profile))
        try:
            container = self.client.containers.create(**kwargs)
        except (docker.errors.DockerException, OSError) as error:
            raise classify(error, what=f"create from {profile.image}") from error
        try:
            container.start()
            line: Line = (Channel.attach(self.client.api, container.id) if supervisor
                          else Lifeline.attach(self.client.api, container.id))
        except (docker.errors.DockerException, OSError) as error:
            _remove_quietly(container)
            raise classify(error, what="start", sandbox_id=container.id) from error
        return container, line

    def supervisor(self, image: str) -> str | None:
        """The supervisor's path in ``image``, or ``None`` (``exec`` it is).

        Raises:
            SandboxConfigError: the image is missing.
            SandboxUnavailable: the engine is not there.
        """
        return self.image(image).supervisor if self.supervise else None

    def image(self, image: str) -> ImageFacts:
        """What ``image`` says of itself (read once).

        Raises:
            SandboxConfigError: the image is missing.
            SandboxUnavailable: the engine is not there.
        """
        with self._lock:
            if image in self._images:
                return self._images[image]
        try:
            found = self.client.images.get(image)
        except (docker.errors.DockerException, OSError) as error:
            raise classify(error, what=f"inspect {image}") from error
        labels = found.labels or {}
        supervisor = _supervisor_path(image, labels)
        facts = ImageFacts(supervisor=supervisor, id=str(getattr(found, "id", "") or ""),
                           env=image_env(_config(found).get("Env")),
                           protocol=int(labels[LABEL_PROTOCOL]) if supervisor else 0)
        with self._lock:
            self._images[image] = facts
        return facts


def _config(image: Any) -> dict[str, Any]:
    attrs = getattr(image, "attrs", None) or {}
    return dict(attrs.get("Config") or {})


def _supervisor_path(image: str, labels: dict[str, str]) -> str | None:
    """The labelled supervisor, if it speaks our protocol (else ``exec``, with a warning)."""
    path = labels.get(LABEL_SUPERVISOR) or None
    if path and labels.get(LABEL_PROTOCOL) not in SUPPORTED:
        log.warning("%s: supervisor protocol %r is none of %s; driving it through exec",
                    image, labels.get(LABEL_PROTOCOL), ", ".join(SUPPORTED))
        return None
    return path


def _remove_quietly(container: Any) -> None:
    with contextlib.suppress(docker.errors.DockerException, OSError):  # the reaper retries
        container.remove(force=True)
