"""Real-Docker fixtures for the sandbox: labelled containers, swept afterwards.

Every container made here carries the test label (``EVALFLEET_TEST_LABEL``, default
``evalfleet.test=1``; see ``tests/services.py``) and a unique run id; after each
test the fixture closes its sandboxes and asserts that none of its containers is left.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from sandbox_support import IMAGES, TEST_LABELS, WORKER, OpenSandbox, left_over, profile, sweep

from evalfleet.sandbox.docker.driver import DockerSandbox
from evalfleet.sandbox.docker.factory import DockerFactory
from evalfleet.sandbox.docker.pool import WarmPool
from evalfleet.sandbox.profile import Limits, Profile


@pytest.fixture(scope="session")
def factory(docker_client: Any) -> Iterator[DockerFactory]:
    """A cold factory whose containers are labelled as tests'."""
    yield DockerFactory(docker_client, worker=WORKER, extra_labels=TEST_LABELS)
    sweep(docker_client)


@pytest.fixture(scope="session")
def exec_factory(docker_client: Any) -> Iterator[DockerFactory]:
    """Like ``factory``, but every step through ``docker exec`` (no supervisor)."""
    yield DockerFactory(docker_client, worker=WORKER, extra_labels=TEST_LABELS, supervise=False)
    sweep(docker_client)


@pytest.fixture
def open_sandbox(factory: DockerFactory, exec_factory: DockerFactory,
                 docker_client: Any, runtime: str) -> Iterator[OpenSandbox]:
    """``open_sandbox(image="python", transport="supervisor"|"exec", **limits)`` on the
    test's runtime; closed after the test, host checked."""
    opened: list[DockerSandbox] = []
    run_id = f"test-{uuid.uuid4().hex[:12]}"

    def open_one(image: str = "python", transport: str = "supervisor",
                 **limits: Any) -> DockerSandbox:
        chosen = exec_factory if transport == "exec" else factory
        sandbox = chosen.acquire(profile(image, runtime, **limits), run_id=run_id)
        opened.append(sandbox)
        return sandbox

    yield open_one
    for sandbox in opened:
        sandbox.close()
    assert left_over(docker_client, run_id) == [], "the host is not clean"


@pytest.fixture
def reusing(runtime: str) -> Profile:
    """A profile whose sandboxes serve up to 5 runs, on the test's runtime."""
    return Profile(name="test-reuse", image=IMAGES["python"], runtime=runtime, reuse_runs=5,
                   limits=Limits(wall_timeout_s=120))


@pytest.fixture
def reuse_pool(docker_client: Any, reusing: Profile) -> Iterator[WarmPool]:
    """A pool of one reusable container of ``reusing`` (filled by hand: no refill thread)."""
    factory = DockerFactory(docker_client, worker=WORKER, extra_labels=TEST_LABELS)
    warm = WarmPool(factory, [(reusing, 1)])
    warm.fill()
    yield warm
    warm.close()
    assert left_over(docker_client, "warm", WORKER) == [], "the host is not clean"
