"""The broker's QoS on a channel already closed (``tasks.broker.qos``)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from evalfleet.tasks.broker.qos import QoS

pytestmark = pytest.mark.unit


class ClosedChannel(SimpleNamespace):
    """A channel Celery settles a cancelled run on after reconnecting elsewhere: its
    connection is gone, and asking it for a Redis client raises (kombu's Sentinel channel:
    ``'NoneType' object has no attribute 'client'``, which stopped a worker in CI)."""

    def conn_or_acquire(self, client: Any = None) -> Any:
        raise AttributeError("'NoneType' object has no attribute 'client'")


def test_ack_and_reject_on_a_closed_channel_leave_the_run_to_the_sweep() -> None:
    qos = QoS(ClosedChannel(connection=None, unacked_key="unacked",
                            unacked_index_key="unacked_index", do_restore=False))
    for tag in ("t1", "t2", "t3"):
        qos._delivered[tag] = object()

    qos.ack("t1")
    qos.reject("t2", requeue=True)
    qos.reject("t3")

    assert qos._dirty == {"t1", "t2", "t3"}  # settled here; Redis keeps them for the sweep
