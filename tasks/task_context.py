"""What a worker process hands the Celery task: the pipeline's collaborators.

``tasks`` never imports ``workers``: the worker builds a :class:`Runtime` at process start
and :func:`install`\\ s it; the task reads it with :func:`current`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from evalfleet.sandbox.base import SandboxFactory

from .evaluation.closing import Closer
from .evaluation.pipeline import Gate, PipelineConfig
from .messages import RunResult
from .patience import Patience
from .publish import Publisher


class Observer(Protocol):
    """Hooks the metrics plugin implements (all optional in effect: see NullObserver)."""

    def run_finished(self, result: RunResult, queue: str,
                     tenant: str | None = None) -> None: ...
    def duplicate(self) -> None: ...
    def redelivered(self) -> None: ...
    def pool(self, stats: list[Any]) -> None: ...


class NullObserver:
    def run_finished(self, result: RunResult, queue: str,
                     tenant: str | None = None) -> None:
        """Nothing."""

    def duplicate(self) -> None:
        """Nothing."""

    def redelivered(self) -> None:
        """Nothing."""

    def pool(self, stats: list[Any]) -> None:
        """Nothing."""


@dataclass
class Runtime:
    """One worker process's collaborators."""

    config: PipelineConfig
    factory: SandboxFactory
    redis: Any
    publisher: Publisher
    delivery_cap: int = 3
    retry_backoff_s: float = 2.0
    observer: Observer = field(default_factory=NullObserver)
    closer: Closer | None = None
    """Removes sandboxes in the background (``None``: each run removes its own at once)."""
    gate: Gate | None = None
    """The operator's preflight requirement (:class:`tasks.checking.preflight.PreflightGate`)."""
    patience: Patience = field(default_factory=Patience)
    """How a run waits for Redis to take the writes it needs (full, loading, unreachable)."""
    time_limit_s: float | None = None
    """Celery's soft time limit of a run: it stops waiting for Redis shortly before."""


Builder = Callable[[], Runtime]
_current: Runtime | None = None
_builder: Builder | None = None
_built_in: int | None = None


def install(runtime: Runtime | None) -> None:
    """Make ``runtime`` the one the task uses in this process."""
    global _current, _built_in
    _current, _built_in = runtime, os.getpid()


def install_builder(builder: Builder | None) -> None:
    """Build the runtime lazily, once per process (after a prefork pool forks)."""
    global _builder, _current
    _builder, _current = builder, None


def current() -> Runtime:
    """The runtime of this process, built on first use if a builder was installed.

    Raises:
        RuntimeError: neither a runtime nor a builder was installed.
    """
    if (_current is None or _built_in != os.getpid()) and _builder is not None:
        install(_builder())
    if _current is None:
        raise RuntimeError("no evalfleet runtime installed in this worker process")
    return _current


def shutdown() -> None:
    """Release this process's runtime (a warm pool removes its idle sandboxes)."""
    global _current
    if _current is not None and _built_in == os.getpid():
        if _current.closer is not None:
            _current.closer.drain()
        close = getattr(_current.factory, "close", None)
        if callable(close):
            close()
    _current = None
