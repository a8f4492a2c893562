"""Kombu's Redis broker bookkeeping, made to survive a full Redis and a restarted one.

With ``maxmemory`` and ``noeviction`` Redis refuses every write that needs memory, and every
command at all inside ``MULTI``. Kombu's Redis transport (5.7) did not expect it
(tests/reliability/test_redis_full.py):

* it takes a message off its queue with ``BRPOP`` (allowed: that frees memory) and only
  then records it as unacknowledged (``ZADD`` + ``HSET`` in a transaction, refused): the
  message was in no list and no hash any more — lost — and the worker died of the error;
* an acknowledgement (``ZREM`` + ``HDEL`` in a transaction) was refused too, and a requeue
  (``reject(requeue=True)``: a lost pool process, a run given back): both killed the worker
  ("Unrecoverable error: OutOfMemoryError");
* the periodic sweep of unacknowledged messages logged a traceback at every interval;
* and, Redis full or not: when Redis went away (a restart) while messages were delivered
  and not acknowledged, Celery closed the broken connection, the channel then tried to
  give those messages back through that released connection, and the worker died
  ("Unrecoverable error: AttributeError: 'NoneType' object has no attribute 'hostname'").

:class:`QoS` does the bookkeeping in scripts flagged ``allow-oom``, each about
memory-neutral: recording a delivered message (it has just left its list), forgetting an
acknowledged one (frees memory), moving a requeued one from the unacked hash back to its
list. A sweep Redis refuses is skipped with one line of warning (the next one catches up),
and so is giving messages back through a released connection (they stay unacknowledged
in Redis, and the sweep restores them).
:func:`install` puts it on kombu's Redis channel, which ``redis://`` and ``rediss://`` URLs
both use, in the worker's process. Script flags need Redis 7.0; evalfleet sets no
``global_keyprefix`` (the scripts name kombu's keys as they are).
"""

from __future__ import annotations

import json
import logging
from time import time
from typing import Any

from kombu.transport import redis as kombu_redis
from kombu.transport import virtual
from redis.exceptions import OutOfMemoryError

log = logging.getLogger(__name__)

#: Keys: kombu's ``unacked_index`` and ``unacked``. Args: time, delivery tag, payload.
_REMEMBER = """#!lua flags=allow-oom
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2])
redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
return 1
"""
#: Keys: ``unacked_index``, ``unacked``. Args: delivery tag.
_FORGET = """#!lua flags=allow-oom
redis.call('ZREM', KEYS[1], ARGV[1])
return redis.call('HDEL', KEYS[2], ARGV[1])
"""
#: Keys: ``unacked_index``, ``unacked``, the queue lists. Args: delivery tag, LPUSH or RPUSH,
#: the payload marked redelivered. Nothing happens when the tag is no longer unacked
#: (acknowledged, or restored by another worker meanwhile).
_RESTORE = """#!lua flags=allow-oom
if redis.call('HDEL', KEYS[2], ARGV[1]) == 0 then return 0 end
redis.call('ZREM', KEYS[1], ARGV[1])
for i = 3, #KEYS do redis.call(ARGV[2], KEYS[i], ARGV[3]) end
return 1
"""


class QoS(kombu_redis.QoS):
    """Kombu's Redis QoS, for a Redis that refuses writes (see the module's docstring)."""

    def append(self, message: Any, delivery_tag: str) -> None:
        """Record ``message`` as delivered and unacknowledged."""
        delivery = message.delivery_info
        payload = json.dumps([message._raw, delivery["exchange"], delivery["routing_key"]])
        self._script(_REMEMBER, [], time(), delivery_tag, payload)
        virtual.QoS.append(self, message, delivery_tag)

    def ack(self, delivery_tag: str) -> None:
        self._script(_FORGET, [], delivery_tag)
        virtual.QoS.ack(self, delivery_tag)

    def reject(self, delivery_tag: str, requeue: bool = False) -> None:
        if requeue:
            self.restore_by_tag(delivery_tag, leftmost=True)
        else:
            self._script(_FORGET, [], delivery_tag)
        virtual.QoS.ack(self, delivery_tag)

    def restore_by_tag(self, tag: str, client: Any = None, leftmost: bool = False) -> None:
        """Put an unacknowledged message back on its queue (marked redelivered)."""
        with self.channel.conn_or_acquire(client) as conn:
            raw = conn.hget(self.unacked_key, tag)
            if raw is None:
                return
            message, exchange, routing_key = json.loads(raw)
            message["headers"]["redelivered"] = True
            message["properties"]["delivery_info"]["redelivered"] = True
            self._script(_RESTORE, self._queues(message, exchange, routing_key), tag,
                         "LPUSH" if leftmost else "RPUSH", json.dumps(message), client=conn)

    def restore_unacked(self, client: Any = None) -> None:
        """Give this channel's delivered, unacknowledged messages back to their queues as it
        closes — unless its connection was already released (Redis went away: Celery closes
        the connection after a broker error). Then they stay in the unacked hash, and the
        sweep puts them back after the visibility timeout."""
        if client is None and self.channel.connection.client is None:
            log.warning("Redis connection lost with %d message(s) delivered and not "
                        "acknowledged: they come back after the visibility timeout",
                        len(self._delivered))
            self._delivered.clear()
            return
        super().restore_unacked(client)

    def restore_visible(self, *args: Any, **kwargs: Any) -> Any:
        """Kombu's sweep, skipped (with a warning) while Redis refuses writes."""
        try:
            return super().restore_visible(*args, **kwargs)
        except OutOfMemoryError as err:
            log.warning("Redis is full (%s): unacknowledged messages are swept back later",
                        err)
            return None

    def _queues(self, message: Any, exchange: str, routing_key: str) -> list[str]:
        """The Redis lists a message goes back to (its queue at its priority)."""
        priority = self.channel._get_message_priority(message, reverse=False)
        return [self.channel._q_for_pri(queue, priority)
                for queue in self.channel._lookup(exchange, routing_key)]

    def _script(self, script: str, queues: list[str], *args: Any, client: Any = None) -> Any:
        with self.channel.conn_or_acquire(client) as conn:
            return conn.eval(script, 2 + len(queues), self.unacked_index_key,
                             self.unacked_key, *queues, *args)


def install() -> None:
    """Make every Redis channel of this process use :class:`QoS` (idempotent)."""
    kombu_redis.Channel.QoS = QoS
