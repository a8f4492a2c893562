"""Real-Docker fixtures for the evaluator step: labelled containers, swept afterwards."""

from __future__ import annotations

import dataclasses
import os
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from services import TEST_LABELS, sweep_label

from evalfleet.sandbox.docker.driver import DockerSandbox
from evalfleet.sandbox.docker.factory import DockerFactory
from evalfleet.sandbox.docker.labels import LABEL_RUN
from evalfleet.sandbox.docker.listing import labelled
from evalfleet.sandbox.profile import Limits, Profile

LABEL = "evalfleet.test.clawdiators"
#: This test run's own value (``EVALFLEET_TEST_LABEL``): runs sharing an engine sweep apart.
RUN = next(iter(TEST_LABELS.values()))
IMAGE = "evalfleet/python:latest"

OpenSandbox = Callable[..., DockerSandbox]


@pytest.fixture(scope="session")
def factory(docker_client: Any) -> Iterator[DockerFactory]:
    """A cold factory whose containers carry this directory's test label."""
    yield DockerFactory(docker_client, worker=f"clawdiators-tests-{os.getpid()}",
                        extra_labels={LABEL: RUN})
    sweep_label(docker_client, f"{LABEL}={RUN}")


@pytest.fixture
def open_sandbox(factory: DockerFactory, docker_client: Any) -> Iterator[OpenSandbox]:
    """``open_sandbox(runtime, **limits)`` on the python image (the default runtime unless
    given); closed after the test, host checked."""
    opened: list[DockerSandbox] = []
    run_id = f"test-{uuid.uuid4().hex[:12]}"

    def open_one(runtime: str | None = None, **limits: Any) -> DockerSandbox:
        profile = Profile(name="test-python", image=IMAGE, runtime=runtime,
                          limits=dataclasses.replace(Limits(wall_timeout_s=120), **limits))
        sandbox = factory.acquire(profile, run_id=run_id)
        opened.append(sandbox)
        return sandbox

    yield open_one
    for sandbox in opened:
        sandbox.close()
    left = labelled(docker_client, [f"{LABEL_RUN}={run_id}"])
    assert left == [], "the host is not clean"
