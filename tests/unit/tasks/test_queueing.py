"""Transport options every sender and worker shares."""

from __future__ import annotations

import pytest

from evalfleet.tasks.queueing import transport_options


@pytest.mark.parametrize(("visibility_s", "sweep_s"), [(3, 1), (6, 1), (120, 12), (3600, 60)])
def test_unacked_runs_are_swept_at_a_tenth_of_the_visibility_timeout(visibility_s: int,
                                                                     sweep_s: int) -> None:
    """A dead host's reserved runs come back soon after the timeout, not up to 100 s later
    (kombu's default sweep is 10 s × a throttle of 10)."""
    options = transport_options(visibility_s)

    assert options["visibility_timeout"] == visibility_s
    assert (options["unacked_restore_interval"], options["unacked_restore_throttle"]) == (
        sweep_s, 1)
