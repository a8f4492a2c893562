"""How tests treat a missing real service: skip on a laptop, fail in CI (``CI=true``)."""

from __future__ import annotations

import os
from typing import NoReturn

import pytest

IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}
#: The OCI runtimes every sandbox test runs under (``scripts/setup.sh`` registers runsc).
RUNTIMES = ("runc", "runsc")


def missing_service(what: str, error: BaseException) -> NoReturn:
    """Skip locally, fail in CI: a CI run must never silently skip a real-service test."""
    message = f"{what} is not available: {error}"
    if IN_CI:
        pytest.fail(message)
    pytest.skip(message)
