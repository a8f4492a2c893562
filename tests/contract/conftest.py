"""Fixtures for the sandbox contract suite: every driver behind one ``Target`` shape."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from services import RUNTIMES, TEST_LABEL, TEST_LABELS, image, missing_service, sweep_label

from evalfleet.sandbox.profile import Limits, Profile
from evalfleet.sandbox.testing.contract import Target
from evalfleet.sandbox.testing.fake import FakeFactory

#: name → image (None: the in-memory fake). Both images have the supervisor; the
#: ``-exec`` driver drives one through ``docker exec`` (as for an image without it).
DRIVERS = {"fake": None, "docker-python": image("python"),
           "docker-busybox": image("busybox"),
           "docker-busybox-exec": image("busybox")}


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Every driver once; the Docker ones under every runtime (``runc``, ``runsc``). The
    fake's checks need no service: they run in the fast lane (``unit``)."""
    if "target" in metafunc.fixturenames:
        ids = [f"{name}-{runtime}" if DRIVERS[name] else name
               for name in sorted(DRIVERS) for runtime in RUNTIMES
               if DRIVERS[name] or runtime == RUNTIMES[0]]
        params = [pytest.param(i, marks=pytest.mark.unit if i == "fake" else ()) for i in ids]
        metafunc.parametrize("target", params, indirect=True, scope="session")


@pytest.fixture(scope="session")
def target(request: pytest.FixtureRequest) -> Iterator[Target]:
    """The driver under test (the Docker ones need a running engine and the runtime)."""
    name, runtime = _split(str(request.param))
    image = DRIVERS[name]
    profile = Profile(name="contract", image=image or "fake", limits=Limits(wall_timeout_s=120),
                      runtime=runtime)
    if image is None:
        yield Target(factory=FakeFactory(), profile=profile)
        return
    client: Any = request.getfixturevalue("docker_client")
    if runtime not in (client.info().get("Runtimes") or {}):
        missing_service(f"the {runtime} runtime", LookupError("not registered with the engine"))
    from evalfleet.sandbox.docker.factory import DockerFactory

    factory = DockerFactory(client, worker="contract-tests", extra_labels=TEST_LABELS,
                            supervise=not name.endswith("-exec"))
    yield Target(factory=factory, profile=profile)
    sweep(client)


def _split(param: str) -> tuple[str, str | None]:
    """``docker-busybox-exec-runsc`` → (``docker-busybox-exec``, ``runsc``); ``fake``."""
    for runtime in RUNTIMES:
        if param.endswith(f"-{runtime}"):
            return param[:-len(runtime) - 1], runtime
    return param, None


def sweep(client: Any) -> None:
    """Remove every container with this run's test label (``TEST_LABELS``: left by a
    failed test)."""
    sweep_label(client, TEST_LABEL)
