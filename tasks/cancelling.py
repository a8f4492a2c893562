"""Ending a run the platform cancelled while a worker runs it.

The cancel itself is decided and published in Redis (:meth:`tasks.lifecycle.Lifecycle.cancel`:
the run's one result is ``cancelled``). The worker running it hears the run id on
:data:`~tasks.redis_keys.CANCELS_CHANNEL` (its tenant's, for a tenant's run) — or, should a
message be lost while its connection was down, reads the run's status record every
:data:`POLL_S` — and ends the run's sandbox at once (:meth:`~sandbox.base.Sandbox.terminate`:
removed, never reused).
The run then stops wherever it was, and its worker publishes nothing (the cancel did).

A run listens only once it asks for a sandbox (:class:`WatchedFactory`): a run that needs
none costs nothing more, and a run cancelled between its delivery and its sandbox never
starts one (:class:`RunCancelled`).
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

import redis as redis_lib

from evalfleet.sandbox.base import Sandbox, SandboxFactory
from evalfleet.sandbox.profile import Profile

from .redis_keys import FLEET, Keyspace, run_ref

log = logging.getLogger(__name__)
#: Seconds between reads of the status record while the channel is quiet.
POLL_S = 2.0
#: Seconds the listener waits for a message before it looks whether its run ended.
LISTEN_S = 0.25


class RunCancelled(Exception):
    """The run was cancelled before its sandbox started."""


class CancelWatch:
    """Listens for the cancellation of one run, and ends its sandboxes when it comes."""

    def __init__(self, redis: Any, run_id: str, keys: Keyspace = FLEET,
                 poll_s: float = POLL_S) -> None:
        self.redis, self.run_id, self.keys, self.poll_s = redis, run_id, keys, poll_s
        self._fired, self._done = threading.Event(), threading.Event()
        self._lock = threading.Lock()
        self._sandboxes: list[Sandbox] = []
        self._pubsub: Any = None
        self._thread: threading.Thread | None = None

    @property
    def cancelled(self) -> bool:
        """Whether the run was cancelled (heard, or read in its record)."""
        return self._fired.is_set()

    def check(self) -> None:
        """Start listening (once), then raise if the run is cancelled already.

        Raises:
            RunCancelled: it is.
        """
        if self._thread is None:
            self._start()
        if self.cancelled:
            raise RunCancelled(self.run_id)

    def guard(self, sandbox: Sandbox) -> None:
        """End ``sandbox`` when the run is cancelled (at once if it is)."""
        with self._lock:
            self._sandboxes.append(sandbox)
            if self.cancelled:
                sandbox.terminate()

    def close(self) -> None:
        """Stop listening."""
        self._done.set()
        if self._thread is not None:
            self._thread.join(timeout=LISTEN_S + 1)
            self._pubsub.close()

    def __enter__(self) -> CancelWatch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _start(self) -> None:
        """Subscribe first, then read the record: a cancel is either heard or read."""
        self._pubsub = self.redis.pubsub(ignore_subscribe_messages=True)
        self._pubsub.subscribe(self.keys.cancels_channel)
        if self._recorded():
            self._fire()
        self._thread = threading.Thread(target=self._listen, daemon=True,
                                        name=f"cancel-watch-{self.run_id[:20]}")
        self._thread.start()

    def _listen(self) -> None:
        wanted, next_poll = self.run_id.encode(), time.monotonic() + self.poll_s
        while not self._done.is_set() and not self.cancelled:
            if self._heard(wanted):
                self._fire()
            elif time.monotonic() >= next_poll:
                next_poll = time.monotonic() + self.poll_s
                if self._recorded():
                    self._fire()

    def _heard(self, wanted: bytes) -> bool:
        try:
            message = self._pubsub.get_message(timeout=LISTEN_S)
        except (redis_lib.RedisError, OSError, ValueError) as error:  # read at the next poll
            log.info("cancel watch of %s: %s", self.run_id, error)
            self._done.wait(self.poll_s)
            return False
        return message is not None and message.get("data") == wanted

    def _recorded(self) -> bool:
        try:
            return bool(self.redis.hget(self.keys.status(self.run_id), "status") == b"cancelled")
        except redis_lib.RedisError:
            return False

    def _fire(self) -> None:
        with self._lock:
            self._fired.set()
            for sandbox in self._sandboxes:
                sandbox.terminate()


class WatchedFactory:
    """A factory whose sandboxes end when their run is cancelled (``watch``)."""

    def __init__(self, factory: SandboxFactory, watch: CancelWatch) -> None:
        self.factory, self.watch = factory, watch

    def acquire(self, profile: Profile, *, run_id: str) -> Sandbox:
        """A sandbox from the factory, guarded.

        Raises:
            RunCancelled: the run was cancelled before it started one.
        """
        self.watch.check()  # a tenant's run is labelled <tenant>/<run_id> (run_ref)
        sandbox = self.factory.acquire(profile, run_id=run_ref(run_id, self.watch.keys))
        self.watch.guard(sandbox)
        return sandbox

    def __getattr__(self, name: str) -> Any:
        return getattr(self.factory, name)
