"""Fixtures for the sandbox contract suite: every driver behind one ``Target`` shape."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from sandbox.contract import Target
from sandbox.fake import FakeFactory
from sandbox.profile import Limits, Profile

#: Labels on every container the contract suite makes (and sweeps).
TEST_LABELS = {"evalfleet.test": "1"}

#: name → image (None: the in-memory fake). Both images have the supervisor; the
#: ``-exec`` driver drives one through ``docker exec`` (as for an image without it).
DRIVERS = {"fake": None, "docker-python": "evalfleet/python:latest",
           "docker-busybox": "evalfleet/busybox:latest",
           "docker-busybox-exec": "evalfleet/busybox:latest"}


@pytest.fixture(params=sorted(DRIVERS), scope="session")
def target(request: pytest.FixtureRequest) -> Iterator[Target]:
    """The driver under test (the Docker ones need a running engine)."""
    image = DRIVERS[request.param]
    profile = Profile(name="contract", image=image or "fake", limits=Limits(wall_timeout_s=120))
    if image is None:
        yield Target(factory=FakeFactory(), profile=profile)
        return
    client: Any = request.getfixturevalue("docker_client")
    from sandbox.docker.factory import DockerFactory

    factory = DockerFactory(client, worker="contract-tests", extra_labels=TEST_LABELS,
                            supervise=not request.param.endswith("-exec"))
    yield Target(factory=factory, profile=profile)
    sweep(client)


def sweep(client: Any) -> None:
    """Remove every container labelled as a test's (left by a failed test)."""
    for container in client.containers.list(ignore_removed=True,
                                            all=True, filters={"label": "evalfleet.test=1"}):
        container.remove(force=True)
