"""Sandbox removal off the run's critical path.

Removing a container costs the engine 70–100 ms, and nothing a run reports depends on it:
by then the plan has stopped every candidate process and read what it needed. A
:class:`Closer` removes sandboxes on one background thread, in the order they were
handed over, while the worker scores and publishes. Removal is never skipped: the queue
is bounded (a worker that outruns its removals waits for them), :meth:`Closer.drain`
finishes every pending removal at shutdown — all at once: a gVisor sandbox torn down
under a fork bomb can take tens of seconds to go, and a shutdown has a deadline — and a
closer that is stopped closes at once.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
import time

from evalfleet.sandbox.base import Sandbox

log = logging.getLogger(__name__)

#: Sandboxes waiting for removal before :meth:`Closer.close_later` blocks.
MAX_PENDING = 4


def close_now(sandbox: Sandbox) -> None:
    """The default: remove the sandbox on the caller's thread."""
    sandbox.close()


class Closer:
    """Closes handed-over sandboxes on a background thread (one per worker process)."""

    def __init__(self, max_pending: int = MAX_PENDING) -> None:
        self._queue: queue.Queue[Sandbox | None] = queue.Queue(maxsize=max_pending)
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._stopped = False

    def close_later(self, sandbox: Sandbox) -> None:
        """Queue ``sandbox`` for removal (waits while ``max_pending`` are already queued)."""
        with self._lock:
            if self._stopped:
                sandbox.close()
                return
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="sandbox-closer",
                                                daemon=True)
                self._thread.start()
        self._queue.put(sandbox)

    def drain(self, timeout: float = 60.0) -> None:
        """Remove everything still queued, each on a thread of its own beside the removal
        under way, waiting up to ``timeout`` s in all; then stop (later sandboxes close at
        once)."""
        with self._lock:
            self._stopped = True
            thread = self._thread
        deadline = time.monotonic() + timeout
        closing = _closing(self._take_all())
        if thread is not None and thread.is_alive():
            with contextlib.suppress(queue.Full):  # full: a late hand-over; joined below
                self._queue.put(None, timeout=_left(deadline))
            closing.append(thread)
        for worker in closing:
            worker.join(_left(deadline))
        for item in self._take_all():  # handed over meanwhile, or left by a dead thread
            _close(item)

    def _take_all(self) -> list[Sandbox]:
        taken: list[Sandbox] = []
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                return taken
            if item is not None:
                taken.append(item)

    @property
    def pending(self) -> int:
        """Sandboxes queued and not yet removed."""
        return self._queue.qsize()

    def _run(self) -> None:
        while True:
            sandbox = self._queue.get()
            if sandbox is None:
                return
            _close(sandbox)


def _closing(sandboxes: list[Sandbox]) -> list[threading.Thread]:
    """A started thread closing each of ``sandboxes``."""
    threads = [threading.Thread(target=_close, args=(sandbox,), name="sandbox-drain",
                                daemon=True) for sandbox in sandboxes]
    for thread in threads:
        thread.start()
    return threads


def _left(deadline: float) -> float:
    return max(0.0, deadline - time.monotonic())


def _close(sandbox: Sandbox) -> None:
    try:
        sandbox.close()
    except Exception:  # close never raises by contract; keep the thread alive anyway
        log.exception("closing sandbox %s failed", sandbox.id)
