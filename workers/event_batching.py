"""The worker's Celery consumer: task events leave in batches, not a round trip each.

Celery's event loop buffers task events (``task-received``, ``task-started``,
``task-succeeded``) and publishes the buffer on the loop's next turn — at a draining
node's pace that is one ``task.multi`` message, and one synchronous Redis ``PUBLISH``, per
event: a third of the main process's time in the profile of BENCHMARKS.md. This consumer
lets the buffer fill for up to :data:`EVENT_BATCH_S` first (Celery still sends it at once
when it holds 24 events). Flower and celery-exporter read the same ``task.multi``
messages as before, each event a little later; events still buffered at shutdown leave
before the connection closes.
"""

from __future__ import annotations

from celery.worker.consumer import Consumer

#: The longest a task event waits for others to share its publication.
EVENT_BATCH_S = 0.05


class EventBatchingConsumer(Consumer):  # type: ignore[misc]
    """Celery's consumer, with task events flushed on a short timer."""

    _event_batch_armed = False

    def on_send_event_buffered(self) -> None:
        """Called for every buffered event, on any thread: arm the timer in the loop."""
        if self.hub:
            self.hub.call_soon(self._arm_event_batch)

    def _arm_event_batch(self) -> None:
        if not self._event_batch_armed:
            self._event_batch_armed = True
            self.hub.call_later(EVENT_BATCH_S, self._flush_event_batch)

    def _flush_event_batch(self) -> None:
        self._event_batch_armed = False
        self._flush_events()

    def shutdown(self) -> None:
        self._flush_events()
        super().shutdown()
