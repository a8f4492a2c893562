"""The consumer's task events wait on one short timer and leave together."""

from __future__ import annotations

from typing import Any

from evalfleet.workers.event_batching import EVENT_BATCH_S, EventBatchingConsumer


class Hub:
    """The two calls of kombu's hub the consumer uses, run by hand."""

    def __init__(self) -> None:
        self.soon: list[Any] = []
        self.later: list[tuple[float, Any]] = []

    def call_soon(self, callback: Any) -> None:
        self.soon.append(callback)

    def call_later(self, delay: float, callback: Any) -> None:
        self.later.append((delay, callback))

    def turn(self) -> None:
        """One turn of the loop: what was called soon runs."""
        ready, self.soon = self.soon, []
        for callback in ready:
            callback()


def consumer() -> tuple[EventBatchingConsumer, Hub, list[str]]:
    found = EventBatchingConsumer.__new__(EventBatchingConsumer)  # no broker, no blueprint
    flushes: list[str] = []
    found.hub = Hub()
    found._flush_events = lambda: flushes.append("flush")
    return found, found.hub, flushes


def test_a_burst_of_events_arms_one_timer_and_flushes_once() -> None:
    found, hub, flushes = consumer()
    for _ in range(5):
        found.on_send_event_buffered()
    hub.turn()
    assert [delay for delay, _ in hub.later] == [EVENT_BATCH_S]
    assert flushes == []
    hub.later.pop()[1]()
    assert flushes == ["flush"]


def test_events_after_a_flush_arm_the_timer_again() -> None:
    found, hub, flushes = consumer()
    found.on_send_event_buffered()
    hub.turn()
    hub.later.pop()[1]()
    found.on_send_event_buffered()
    hub.turn()
    assert len(hub.later) == 1
    hub.later.pop()[1]()
    assert flushes == ["flush", "flush"]


def test_without_an_event_loop_nothing_is_scheduled() -> None:
    found, _, flushes = consumer()
    found.hub = None
    found.on_send_event_buffered()
    assert flushes == []


def test_events_still_waiting_leave_before_the_connection_closes() -> None:
    found, _, flushes = consumer()
    steps: list[str] = flushes  # one record of what happened, in order

    class Blueprint:
        def shutdown(self, parent: Any) -> None:
            steps.append("close")

    found.blueprint = Blueprint()
    found._pending_operations = []
    found.shutdown()
    assert steps == ["flush", "close"]


def test_the_celery_app_names_this_consumer_by_a_path_that_resolves() -> None:
    """Celery imports ``worker_consumer`` by name only when a worker starts: the name must
    be the namespace's, or every worker dies at boot."""
    from kombu.utils.imports import symbol_by_name

    from evalfleet.workers.app import make_app
    from evalfleet.workers.settings import Settings

    app = make_app(Settings(metrics_port=0))

    assert symbol_by_name(app.conf.worker_consumer) is EventBatchingConsumer
