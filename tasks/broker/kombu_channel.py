"""Kombu's Redis channel, taking a message and recording it in one step on the server.

Kombu's Redis transport takes a message with ``BRPOP`` (the message leaves its list) and
records it as unacknowledged only once the reply has reached the worker. A worker killed,
cut off or losing Redis in between lost the run for good: in no list, in no hash, no result
ever (docs/reliability.md; kombu issue #305). For evalfleet's queues (``evalfleet.*``) this
channel takes instead with :data:`~tasks.broker.lua.TAKE`, which pops and records in one
step; from then on kombu's visibility sweep brings the run back if its worker goes away.

A script cannot block, so an idle channel waits on the queues' *doorbells*: each message
sent through this channel is queued together with a token on its queue's doorbell
(:data:`~tasks.broker.lua.PUT`), and a waiting channel ``BRPOP``\\ s the doorbells (a
lost token loses nothing), then takes. It alternates: take while takes find messages; after
an empty one, wait on the doorbells at most ``brpop_timeout`` (1 s), then take again. A
message queued without a token (a sender without this channel, a run given back to its
queue) is found within that second. Queues that are not evalfleet's keep kombu's
``BRPOP``.
"""

from __future__ import annotations

from queue import Empty
from time import monotonic, time
from typing import Any

from kombu.transport import redis as kombu_redis
from kombu.utils.encoding import bytes_to_str
from kombu.utils.json import dumps, loads

from ..queueing import QUEUE_PREFIX
from ..redis_keys import doorbell_key
from .lua import PUT, PUT_ONCE, TAKE
from .qos import QoS

#: The header of a message the intake's forwarder sends: ``[status record, entry id]``.
ONCE_HEADER = "evalfleet_once"
#: What a channel's pending poll command is.
KOMBU, DOORBELL, TAKING = "kombu", "doorbell", "take"


def is_ours(queue: str) -> bool:
    """Whether ``queue`` is one of evalfleet's queues (``evalfleet.<profile>``)."""
    return queue.startswith(QUEUE_PREFIX)


class Channel(kombu_redis.Channel):
    """Kombu's Redis channel, with one-step takes and doorbells for evalfleet's queues."""

    QoS = QoS
    #: kombu's: the connection a poll command is pending on, and when it was sent.
    _in_poll: Any = None
    _brpop_sent_at: Any = None
    #: The poll command in flight (KOMBU, DOORBELL or TAKING), None when there is none.
    _sent: str | None = None
    #: Whether the last take found every queue empty (then the channel waits).
    _idle = False
    #: The client this channel sends with (kombu builds one per message).
    _sender: Any = None

    def _brpop_start(self, timeout: float | None = None) -> None:
        queues = self._queue_cycle.consume(len(self.active_queues))
        if not queues:
            return
        if not all(is_ours(queue) for queue in queues):
            self._sent = KOMBU
            return super()._brpop_start(timeout)  # type: ignore[no-any-return]
        self._sent = DOORBELL if self._idle else TAKING
        command = self._wait_command(queues, timeout) if self._idle \
            else self._take_command(queues)
        self._in_poll = self.client.connection
        self._brpop_sent_at = monotonic()
        self.client.connection.send_command(*command)

    def _wait_command(self, queues: list[str], timeout: float | None) -> list[Any]:
        """``BRPOP`` on the doorbells of ``queues`` (server-side timeout, as kombu's)."""
        wait = self.brpop_timeout if timeout is None else timeout
        return ["BRPOP", *(doorbell_key(q) for q in queues), wait or self.brpop_timeout]

    def _take_command(self, queues: list[str]) -> list[Any]:
        """:data:`TAKE` over ``queues``' lists, most urgent priority first (as kombu's)."""
        lists = [self._q_for_pri(q, pri) for pri in self.priority_steps for q in queues]
        keys = [self.unacked_index_key, self.unacked_key,
                *(doorbell_key(q) for q in queues), *lists]
        return ["EVAL", TAKE, len(keys), *keys, time(), len(queues)]

    def _brpop_read(self, **options: Any) -> bool:
        sent, self._sent = self._sent, None
        if sent == KOMBU:
            return super()._brpop_read(**options)  # type: ignore[no-any-return]
        reply = self._read_reply(**options)
        self._idle = sent == TAKING and not reply
        if sent != TAKING or not reply:
            raise Empty()
        dest, item, recorded = reply
        self._deliver_taken(bytes_to_str(dest), bytes_to_str(item), recorded == 1)
        return True

    def _read_reply(self, **options: Any) -> Any:
        """The reply of the pending command (kombu's connection handling)."""
        try:
            try:
                return self.client.parse_response(self.client.connection, "BRPOP", **options)
            except self.connection_errors:
                self.client.connection.disconnect()  # the next poll reconnects
                raise
        finally:
            self._in_poll = None
            self._flush_brpop_reauth()

    def _deliver_taken(self, dest: str, item: str, recorded: bool) -> None:
        """Hand a taken message to its consumer (its QoS told when it is recorded)."""
        queue = dest.rsplit(self.sep, 1)[0]
        self._queue_cycle.rotate(queue)
        message = loads(item)
        if recorded:
            self.qos.taken.add(message["properties"]["delivery_tag"])
        self.connection._deliver(message, queue)

    def _put(self, queue: str, message: Any, **kwargs: Any) -> None:
        """Queue ``message`` and ring its queue's doorbell (evalfleet's queues)."""
        if not is_ours(queue) or (self._expires and queue in self._expires):
            return super()._put(queue, message, **kwargs)  # type: ignore[no-any-return]
        priority = self._get_message_priority(message, reverse=False)
        args = _put_args(self._q_for_pri(queue, priority), doorbell_key(queue), message)
        batch = kwargs.pop("_publish_batch", None)
        if batch is not None:
            batch.add("eval", *args)
            return None
        if self._sender is None:  # a client object costs a quarter of a submission
            self._sender = self._create_client()
        self._sender.eval(*args)
        return None


def _put_args(target: str, doorbell: str, message: Any) -> tuple[Any, ...]:
    """The script and its arguments that queue ``message``: once per intake entry when its
    headers name one (:data:`ONCE_HEADER`: the run's status record and the entry) and it is
    the run's first message. Celery's retries carry the first message's headers: a retry
    (``retries`` above 0) is queued as any message."""
    headers = message.get("headers") or {}
    once = headers.get(ONCE_HEADER)
    if not once or headers.get("retries"):
        return (PUT, 2, target, doorbell, dumps(message))
    record, entry = once
    return (PUT_ONCE, 3, target, doorbell, record, dumps(message), entry)


class SentinelChannel(Channel, kombu_redis.SentinelChannel):
    """:class:`Channel` on kombu's Sentinel transport (``sentinel://`` broker URLs): the
    same one-step takes and doorbells, on whichever server is the primary now."""
