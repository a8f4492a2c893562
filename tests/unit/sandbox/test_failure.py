"""Sorting Docker failures into retry / don't retry / candidate's fault."""

from __future__ import annotations

from typing import Any

import docker.errors
import pytest
import requests

from evalfleet.sandbox.docker.failure import classify, start_error_is_candidates
from evalfleet.sandbox.errors import SandboxConfigError, SandboxUnavailable


def api_error(status: int, message: str) -> docker.errors.APIError:
    response: Any = requests.Response()
    response.status_code = status
    return docker.errors.APIError(message, response=response, explanation=message)


@pytest.mark.parametrize(("error", "kind"), [
    (docker.errors.ImageNotFound("No such image: x"), SandboxConfigError),
    (api_error(404, "No such image: evalfleet/x:latest"), SandboxConfigError),
    (api_error(400, "Minimum memory limit allowed is 6MB"), SandboxConfigError),
    (api_error(404, "No such container: abc"), SandboxUnavailable),
    (api_error(409, "Container abc is not running"), SandboxUnavailable),
    (api_error(500, "something new"), SandboxUnavailable),
    (requests.exceptions.ConnectionError("connection refused"), SandboxUnavailable),
    (docker.errors.DockerException("Error while fetching server API version"),
     SandboxUnavailable),
])
def test_classify(error: Exception, kind: type[Exception]) -> None:
    """Each known signature maps to its type; anything unknown means retry."""
    assert type(classify(error, what="create", sandbox_id="abc")) is kind


@pytest.mark.parametrize(("message", "candidates"), [
    ('chdir to cwd ("/workspace/x") set in config.json failed: no such file', True),
    ("fork/exec: resource temporarily unavailable", True),
    ('OCI runtime exec failed: executing processes for container: executing command "sh -c '
     'echo alive" in sandbox: try again: unknown', True),  # gVisor, after a fork bomb
    ("container not running", False),
])
def test_start_errors(message: str, candidates: bool) -> None:
    """A missing workdir or exhausted pids is the candidate's; the rest is ours."""
    assert start_error_is_candidates(message) is candidates
