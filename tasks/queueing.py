"""Queue names, priorities and the Redis transport options every sender and worker shares.

Contracts: the task ``evalfleet.run``; one queue per sandbox profile, ``evalfleet.<profile>``.
A request's ``priority`` runs 0 (least urgent) to 9 (most urgent); kombu's Redis transport
puts *lower* numbers first, so it is sent as ``9 - priority``. Each priority level is its own
Redis list (``evalfleet.default``, ``evalfleet.default:1`` … ``:9``) — KEDA must count them all.
"""

from __future__ import annotations

from typing import Any

TASK_NAME = "evalfleet.run"
QUEUE_PREFIX = "evalfleet."
PRIORITY_STEPS = list(range(10))


def queue_for(profile: str) -> str:
    """The queue of a sandbox profile."""
    return f"{QUEUE_PREFIX}{profile}"


def queue_lists(queue: str) -> list[str]:
    """The Redis lists of ``queue``: one per priority step (kombu's ``<queue>:<step>``,
    the first step the queue's own name)."""
    return [queue] + [f"{queue}:{step}" for step in PRIORITY_STEPS[1:]]


def broker_priority(priority: int) -> int:
    """The kombu priority for a request priority (0 least … 9 most urgent)."""
    return 9 - max(0, min(9, priority))


def transport_options(visibility_timeout_s: int) -> dict[str, Any]:
    """Redis transport options; senders and workers must agree on them."""
    return {
        # A reserved run not acked within this is redelivered: keep it above the longest run.
        "visibility_timeout": visibility_timeout_s,
        # How often a worker sweeps unacked runs past the visibility timeout back into the
        # queue. kombu's default sweeps every interval × throttle = 10 × 10 s, whatever the
        # timeout: a dead host's reserved runs waited up to 100 s more. Sweep at a tenth of
        # the timeout (1–60 s), every time (tests/reliability: host killed with runs reserved).
        "unacked_restore_interval": max(1, min(60, visibility_timeout_s // 10)),
        "unacked_restore_throttle": 1,
        "priority_steps": PRIORITY_STEPS,
        "sep": ":",
        "queue_order_strategy": "priority",
    }


def profile_of(pack: Any) -> str:
    """The profile an inline pack mapping asks for (``default`` when it names none)."""
    version = pack.get("version") if isinstance(pack, dict) else None
    sandbox = version.get("sandbox") if isinstance(version, dict) else None
    profile = sandbox.get("profile") if isinstance(sandbox, dict) else None
    return profile if isinstance(profile, str) and profile else "default"
