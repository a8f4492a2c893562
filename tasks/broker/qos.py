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
memory-neutral: recording a delivered message (it has just left its list; for evalfleet's
queues the take has recorded it already, :mod:`tasks.broker.kombu_channel`), forgetting an
acknowledged one (frees memory), moving a requeued one from the unacked hash back to its
list. A sweep Redis refuses is skipped with one line of warning (the next one catches up),
and so is giving messages back through a released connection (they stay unacknowledged
in Redis, and the sweep restores them). Script flags need Redis 7.0; evalfleet sets no
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

from .lua import FORGET, REMEMBER, RESTORE

log = logging.getLogger(__name__)

class QoS(kombu_redis.QoS):
    """Kombu's Redis QoS, for a Redis that refuses writes (see the module's docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: Delivery tags the channel's take recorded as unacknowledged on the server.
        self.taken: set[str] = set()

    def append(self, message: Any, delivery_tag: str) -> None:
        """Record ``message`` as delivered and unacknowledged (unless its take did)."""
        if delivery_tag in self.taken:
            self.taken.discard(delivery_tag)
        else:
            delivery = message.delivery_info
            payload = json.dumps([message._raw, delivery["exchange"],
                                  delivery["routing_key"]])
            self._script(REMEMBER, [], time(), delivery_tag, payload)
        virtual.QoS.append(self, message, delivery_tag)

    def ack(self, delivery_tag: str) -> None:
        if not self._closed("acknowledged"):
            self._script(FORGET, [], delivery_tag)
        virtual.QoS.ack(self, delivery_tag)

    def reject(self, delivery_tag: str, requeue: bool = False) -> None:
        if self._closed("rejected"):
            pass
        elif requeue:
            self.restore_by_tag(delivery_tag, leftmost=True)
        else:
            self._script(FORGET, [], delivery_tag)
        virtual.QoS.ack(self, delivery_tag)

    def _closed(self, what: str) -> bool:
        """Whether this channel was closed under a message it delivered: Celery settles a
        run it cancelled at a broker connection loss on the channel that delivered it,
        after reconnecting on another. That channel has no connection left (kombu's
        Sentinel channel not even a pool to ask one of): the message stays in the unacked
        hash, and the sweep gives it back after the visibility timeout, where its
        publication is found done (or it runs again). Acking there raised, and Celery
        stopped the whole worker ("Unrecoverable error")."""
        if getattr(self.channel, "connection", None) is not None:
            return False
        log.warning("a run %s after its Redis connection closed: left unacknowledged, it "
                    "comes back after the visibility timeout", what)
        return True

    def restore_by_tag(self, tag: str, client: Any = None, leftmost: bool = False) -> None:
        """Put an unacknowledged message back on its queue (marked redelivered)."""
        with self.channel.conn_or_acquire(client) as conn:
            raw = conn.hget(self.unacked_key, tag)
            if raw is None:
                return
            message, exchange, routing_key = json.loads(raw)
            message["headers"]["redelivered"] = True
            message["properties"]["delivery_info"]["redelivered"] = True
            self._script(RESTORE, self._queues(message, exchange, routing_key), tag,
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

