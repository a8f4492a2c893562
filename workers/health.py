"""Liveness and readiness: a heartbeat file and key, and the ``evalfleet health`` check.

Liveness needs no network: the worker's main process rewrites a local heartbeat file every
``heartbeat_interval_s``; a file older than ``heartbeat_ttl_s`` means the process is gone or
stuck. Readiness is liveness plus a reachable broker and a Docker engine that answers — so a
Redis blip, or a restarting engine sidecar, makes pods unready, never restarts them. The same
beat is written to ``evalfleet:heartbeat:<worker_id>`` (with a TTL) so that the sandbox reaper
can tell live workers' containers from orphans — even when Redis is full: the key is written
by a script flagged ``allow-oom`` (a few bytes per worker), because a beat Redis refused let
the key expire and every reaper, this worker's own included, removed the worker's running
sandboxes as orphans.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evalfleet.tasks.redis_keys import heartbeat_key

_BEAT = """#!lua flags=allow-oom
return redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
"""


class Heartbeat:
    """A daemon thread that beats until stopped."""

    def __init__(self, redis: Any, worker_id: str, path: Path, interval_s: float,
                 ttl_s: float, notes: Sequence[str] = ()) -> None:
        self.redis, self.worker_id, self.path = redis, worker_id, path
        self.interval_s, self.ttl_s = interval_s, ttl_s
        self.notes = list(notes)
        """Lines ``evalfleet health`` prints with its verdict (e.g. the sandbox isolation)."""
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="evalfleet-heartbeat",
                                        daemon=True)

    def start(self) -> None:
        self.beat()
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=self.interval_s + 1)
        self.path.unlink(missing_ok=True)

    def beat(self) -> None:
        """One beat: the file always, the Redis key when Redis answers."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text("".join(f"{line}\n" for line in
                                     [f"{self.worker_id} {time.time():.3f}", *self.notes]))
        with contextlib.suppress(Exception):  # Redis away: liveness must not depend on it
            self.redis.eval(_BEAT, 1, heartbeat_key(self.worker_id), time.time(),
                            int(self.ttl_s))

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.beat()


def is_live(path: Path, ttl_s: float, now: float | None = None) -> tuple[bool, str]:
    """Whether the heartbeat file is fresh, and why not."""
    try:
        age = (now or time.time()) - path.stat().st_mtime
    except FileNotFoundError:
        return False, f"no heartbeat file at {path}"
    if age > ttl_s:
        return False, f"heartbeat is {age:.0f} s old (limit {ttl_s:.0f} s)"
    return True, f"heartbeat {age:.1f} s old"


def notes(path: Path) -> list[str]:
    """The notes the worker wrote under its beat (none when there is no file)."""
    try:
        return path.read_text().splitlines()[1:]
    except OSError:
        return []


def is_ready(path: Path, ttl_s: float, redis: Any, engine: Any = None) -> tuple[bool, str]:
    """Liveness plus a broker that answers PING and, when given, an engine that answers
    ``/_ping`` (a docker SDK client)."""
    live, why = is_live(path, ttl_s)
    if not live:
        return live, why
    try:
        redis.ping()
    except Exception as err:  # any failure to reach the broker means not ready
        return False, f"broker unreachable: {err}"
    why += "; broker reachable"
    if engine is None:
        return True, why
    try:
        engine.ping()
    except Exception as err:  # any failure to reach the engine means not ready
        return False, f"Docker engine unreachable: {err}"
    return True, why + "; engine reachable"


def worker_alive(redis: Any, worker_id: str) -> bool:
    """Whether ``worker_id`` beat recently (for the reaper)."""
    return bool(redis.exists(heartbeat_key(worker_id)))
