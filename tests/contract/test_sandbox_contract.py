"""The shared sandbox contract, run for the fake and for the Docker driver."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from evalfleet.sandbox.testing.contract import CHECKS, Target


@pytest.mark.parametrize("check", CHECKS, ids=[c.__name__.removeprefix("check_") for c in CHECKS])
def test_driver_meets_the_contract(target: Target, check: Callable[[Target], None]) -> None:
    """Each contract check passes for each driver."""
    check(target)
