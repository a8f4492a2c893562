"""Evalfleet's Redis broker: kombu's Redis transport, made not to lose a run.

* :mod:`.kombu_channel` takes a message and records it as unacknowledged in one server-side step,
  and queues each message with a doorbell token idle workers wait on;
* :mod:`.qos` does kombu's bookkeeping in scripts a full Redis still runs;
* :mod:`.lua` holds the Lua.

:func:`install` puts both on kombu's Redis transport, which ``redis://`` and ``rediss://``
URLs both use, and on its Sentinel transport (``sentinel://``: :mod:`tasks.redis_connection`).
Workers install it at start, senders (:func:`tasks.platform.intake.sender_app`) when they
build their app. Other Celery apps in the same process keep kombu's behaviour for
their own queues (anything outside ``evalfleet.*``).
"""

from __future__ import annotations

from kombu.transport import redis as kombu_redis

from .kombu_channel import Channel, SentinelChannel
from .qos import QoS

__all__ = ["Channel", "QoS", "SentinelChannel", "install"]


def install() -> None:
    """Make every Redis connection of this process use :class:`Channel`, and every Sentinel
    one :class:`SentinelChannel` (idempotent)."""
    kombu_redis.Transport.Channel = Channel
    kombu_redis.SentinelTransport.Channel = SentinelChannel
