"""Real-Docker fixtures for the sandbox: labelled containers, swept afterwards.

Every container made here carries ``evalfleet.test=1`` and a unique run id; after each
test the fixture closes its sandboxes and asserts that none of its containers is left.
"""

from __future__ import annotations

import dataclasses
import os
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from sandbox.docker.driver import DockerSandbox
from sandbox.docker.factory import DockerFactory
from sandbox.docker.limits import LABEL_RUN
from sandbox.profile import Limits, Profile

TEST_LABELS = {"evalfleet.test": "1"}
IMAGES = {"python": "evalfleet/python:latest", "busybox": "evalfleet/busybox:latest"}
WORKER = f"sandbox-tests-{os.getpid()}"

OpenSandbox = Callable[..., DockerSandbox]


def sweep(client: Any, label: str = "evalfleet.test=1") -> None:
    """Remove every container with ``label`` (what a failed test may leave)."""
    for container in client.containers.list(all=True, filters={"label": label}):
        container.remove(force=True)


def left_over(client: Any, run_id: str) -> list[Any]:
    """Containers of ``run_id`` still on the host."""
    return list(client.containers.list(all=True, filters={"label": f"{LABEL_RUN}={run_id}"}))


@pytest.fixture(scope="session")
def factory(docker_client: Any) -> Iterator[DockerFactory]:
    """A cold factory whose containers are labelled as tests'."""
    yield DockerFactory(docker_client, worker=WORKER, extra_labels=TEST_LABELS)
    sweep(docker_client)


def profile(image: str = "python", **limits: Any) -> Profile:
    """A default-hardened profile with some limits overridden."""
    return Profile(name=f"test-{image}", image=IMAGES[image],
                   limits=dataclasses.replace(Limits(wall_timeout_s=120), **limits))


@pytest.fixture
def open_sandbox(factory: DockerFactory, docker_client: Any) -> Iterator[OpenSandbox]:
    """``open_sandbox(image="python", **limits)``; closed after the test, host checked."""
    opened: list[DockerSandbox] = []
    run_id = f"test-{uuid.uuid4().hex[:12]}"

    def open_one(image: str = "python", **limits: Any) -> DockerSandbox:
        sandbox = factory.acquire(profile(image, **limits), run_id=run_id)
        opened.append(sandbox)
        return sandbox

    yield open_one
    for sandbox in opened:
        sandbox.close()
    assert left_over(docker_client, run_id) == [], "the host is not clean"
