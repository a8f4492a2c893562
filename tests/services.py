"""What tests share about real services: how a missing one is treated (skip on a laptop,
fail in CI, ``CI=true``), the runtimes, and the label and images of the sandbox tests."""

from __future__ import annotations

import os
from typing import Any, NoReturn

import pytest

from evalfleet.sandbox.docker.listing import labelled

IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}
#: The OCI runtimes every sandbox test runs under (``scripts/setup.sh`` registers runsc).
RUNTIMES = ("runc", "runsc")

#: ``key=value`` on every container the sandbox and contract tests make, and what their
#: fixtures sweep at the end of the session. Several test runs on one engine (several
#: worktrees) each give theirs its own (``EVALFLEET_TEST_LABEL=evalfleet.test=alice``), so
#: that one run's sweep never removes the containers of another still running.
#: Under pytest-xdist each worker process (``gw0``, ``gw1``) sweeps its own label.
TEST_LABEL = ((os.environ.get("EVALFLEET_TEST_LABEL") or "evalfleet.test=1")
              + (f"-{os.environ['PYTEST_XDIST_WORKER']}"
                 if os.environ.get("PYTEST_XDIST_WORKER") else ""))
TEST_LABELS = dict([TEST_LABEL.split("=", 1) if "=" in TEST_LABEL else (TEST_LABEL, "1")])
#: Tag of the sandbox images the sandbox and contract tests run (``evalfleet/python:TAG``,
#: ``evalfleet/busybox:TAG``): ``IMAGE_TAG=mine bash scripts/build-images.sh`` builds a
#: set of one's own, and ``EVALFLEET_TEST_IMAGE_TAG=mine`` runs the tests on it.
IMAGE_TAG = os.environ.get("EVALFLEET_TEST_IMAGE_TAG") or "latest"


def image(name: str) -> str:
    """The sandbox image ``name`` (``python``, ``busybox``) the tests run."""
    return f"evalfleet/{name}:{IMAGE_TAG}"


def sweep_label(client: Any, label: str = TEST_LABEL) -> None:
    """Remove every container carrying ``label`` (what a failed test may leave); one that
    is already gone or being removed counts as removed."""
    import docker.errors

    for container in labelled(client, [label]):
        try:
            container.remove(force=True)
        except docker.errors.NotFound:
            pass
        except docker.errors.APIError as error:
            if "already in progress" not in str(error):
                raise


def missing_service(what: str, error: BaseException) -> NoReturn:
    """Skip locally, fail in CI: a CI run must never silently skip a real-service test."""
    message = f"{what} is not available: {error}"
    if IN_CI:
        pytest.fail(message)
    pytest.skip(message)
