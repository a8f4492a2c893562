"""Why a gVisor sandbox died, as the engine records it.

Under gVisor the host kills a sandbox whole at its memory limit (its kernel is one process
there). The engine learns of the death and of its cause as two events, the exit and the OOM,
and they can come in either order. When the OOM comes first, the container's state says
``OOMKilled``. When it comes after the exit (a few ms later, on a loaded host), the state
never does: 2 of 15 memory bombs on a busy machine, the flag still unset 20 s later. That
lost flag was the flake of ``test_memory_bomb_is_oom_killed[runsc-*]``, which no wait on the
flag could cure. The engine publishes the ``oom`` event all the same, so its event log is
asked for one, up to :data:`OOM_EVENT_WAIT_S` after the exit.
"""

from __future__ import annotations

import time
from datetime import datetime
from typing import Any

import docker.errors

#: Seconds to wait for the engine to notice that a container whose stream ended has died.
DEATH_WAIT_S = 6.0
#: Seconds after the exit, in the engine's own clock, within which its ``oom`` event must
#: come (a few ms measured on a loaded host; the window only runs out for a death of
#: another cause).
OOM_EVENT_WAIT_S = 5.0
#: What reading the engine can raise.
_ENGINE_ERRORS = (docker.errors.DockerException, OSError, KeyError, ValueError)


def died_of_memory(client: Any, container: Any) -> bool:
    """Whether the engine says the host OOM-killed ``container``: its state once stopped
    (watched for up to :data:`DEATH_WAIT_S`), else its ``oom`` event."""
    state = stopped_state(container)
    if state is None:
        return False
    return bool(state.get("OOMKilled")) or oom_event(client, container.id, state)


def stopped_state(container: Any) -> dict[str, Any] | None:
    """The container's state once the engine calls it stopped; ``None`` if it still runs
    after :data:`DEATH_WAIT_S` or cannot be read."""
    give_up = time.monotonic() + DEATH_WAIT_S
    while True:
        try:
            container.reload()
            state: dict[str, Any] = container.attrs["State"]
        except _ENGINE_ERRORS:
            return None
        if not state.get("Running"):
            return state
        if time.monotonic() > give_up:
            return None
        time.sleep(0.02)


def oom_event(client: Any, container_id: str, state: dict[str, Any]) -> bool:
    """Whether the engine published an ``oom`` event for the container between its start and
    :data:`OOM_EVENT_WAIT_S` after its exit (answered at the first one; else when the window
    closes on the engine's clock)."""
    try:
        since, exited = unix_time(state["StartedAt"]), unix_time(state["FinishedAt"])
        stream = client.events(since=f"{since:.6f}", until=f"{exited + OOM_EVENT_WAIT_S:.6f}",
                               filters={"type": "container", "container": container_id,
                                        "event": "oom"}, decode=True)
    except _ENGINE_ERRORS:
        return False
    try:
        return any(event.get("status") == "oom" for event in stream)
    except _ENGINE_ERRORS:
        return False
    finally:
        stream.close()


def unix_time(stamp: str) -> float:
    """Seconds since the epoch of one of the engine's RFC 3339 times (nanoseconds allowed).

    Raises:
        ValueError: not such a time.
    """
    head, _, fraction = stamp.rstrip("Z").partition(".")
    seconds = datetime.fromisoformat(f"{head}+00:00").timestamp()
    return seconds + float(f"0.{fraction[:9] or 0}")
