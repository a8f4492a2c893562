"""Patience: a run waits for Redis to take the writes it cannot do without.

A full Redis (``maxmemory`` with ``noeviction``, the documented policy) refuses writes with
``OOM``; a restarting one answers ``LOADING``; an unreachable one raises connection errors.
None of that is the run's fault, and failing the task would let Celery acknowledge a run
whose result was never published: it would be lost. So the task retries the step (its
delivery count, its publication, the sending of its retry) with capped exponential backoff
and goes on as soon as Redis takes it, long before the visibility timeout would bring the
run back. Only past ``deadline`` (Celery's soft time limit is near) does it give up, with
:class:`Refused`, and the task gives the run back to the queue.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

import redis.exceptions
from kombu.exceptions import OperationalError

log = logging.getLogger(__name__)
T = TypeVar("T")

#: What Redis (or kombu in front of it) raises when it cannot take a write now.
REFUSALS: tuple[type[BaseException], ...] = (
    redis.exceptions.OutOfMemoryError, redis.exceptions.ConnectionError,
    redis.exceptions.TimeoutError, redis.exceptions.ReadOnlyError, OperationalError)


class Refused(Exception):
    """Redis refused a step until the deadline: the run must go back to the queue."""


@dataclass
class Patience:
    """How a run waits for Redis: ``first_s``, doubling up to ``max_s`` between attempts."""

    first_s: float = 0.5
    max_s: float = 5.0
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = time.monotonic
    on_refusal: Callable[[str], None] = field(default=lambda step: None)
    """Called with the step's name at every refusal (the metrics count them)."""

    def deadline(self, within_s: float | None) -> float:
        """The clock reading ``within_s`` from now (never, for ``None``)."""
        return math.inf if within_s is None else self.clock() + within_s

    def persist(self, step: str, attempt: Callable[[], T], deadline: float) -> T:
        """``attempt()``'s value, retried while Redis refuses it.

        Raises:
            Refused: Redis still refused it when the next try would pass ``deadline``.
        """
        delay, refusals = self.first_s, 0
        while True:
            try:
                found = attempt()
            except REFUSALS as err:
                refusals += 1
                self._refused(step, err, refusals, delay, deadline)
                delay = min(delay * 2, self.max_s)
                continue
            if refusals:
                log.info("%s: Redis took it after %d refusals", step, refusals)
            return found

    def _refused(self, step: str, err: BaseException, refusals: int, delay: float,
                 deadline: float) -> None:
        self.on_refusal(step)
        if self.clock() + delay > deadline:
            raise Refused(f"{step}: Redis refused it {refusals} times until the task's "
                          f"deadline ({type(err).__name__}: {err})") from err
        level = logging.WARNING if refusals == 1 else logging.DEBUG
        log.log(level, "%s: Redis refused it (%s: %s); retrying every %.1f-%.0f s until it "
                "takes it", step, type(err).__name__, err, delay, self.max_s)
        self.sleep(delay)
