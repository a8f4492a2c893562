"""Sandbox removal off the run's critical path.

Removing a container costs the engine 70–100 ms, and nothing a run reports depends on it:
by then the plan has stopped every candidate process and read what it needed. A
:class:`Closer` removes sandboxes on one background thread, in the order they were
handed over, while the worker scores and publishes. Removal is never skipped: the queue
is bounded (a worker that outruns its removals waits for them), :meth:`Closer.drain`
finishes every pending removal at shutdown, and a closer that is stopped closes at once.
"""

from __future__ import annotations

import logging
import queue
import threading

from sandbox.base import Sandbox

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
        """Remove everything still queued, then stop; later sandboxes close at once."""
        with self._lock:
            self._stopped = True
            thread = self._thread
        if thread is not None and thread.is_alive():
            self._queue.put(None)
            thread.join(timeout)
        while True:  # anything the thread did not get to (it died or timed out)
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                return
            if item is not None:
                item.close()

    @property
    def pending(self) -> int:
        """Sandboxes queued and not yet removed."""
        return self._queue.qsize()

    def _run(self) -> None:
        while True:
            sandbox = self._queue.get()
            if sandbox is None:
                return
            try:
                sandbox.close()
            except Exception:  # close never raises by contract; keep the thread alive anyway
                log.exception("closing sandbox %s failed", sandbox.id)
