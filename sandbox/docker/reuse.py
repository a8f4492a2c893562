"""Sandbox reuse: whether a used sandbox may serve another run, and its verified reset.

A profile with ``reuse_runs`` N > 1 lets one container serve up to N runs, of any
submitters, one after another (:class:`~sandbox.docker.pool.WarmPool` keeps them). Between
two runs the container's supervisor resets it (``C``, protocol 3; see
``sandbox/images/supervisor/supervisor.c``): every process but pid 1 is stopped, every
writable mount (the workspace, ``/tmp``, ``/dev/shm``, the judge's room, the mqueue file
system, anything else mounted read-write) is emptied back to what it held when the
supervisor started, SysV IPC objects are removed, and the supervisor then *verifies* that
the sandbox is as it started: only pid 1, every writable mount's entries (owners, modes,
sizes) as at the start, no IPC object, no socket, no file lock. A reset that cannot be
verified leaves the container to be removed.

A used sandbox is removed ("discarded"), never reused, when (:data:`DISCARD_REASONS`):

* it served N runs (``runs``);
* a limit marked the run: the memory limit (``oom``, also an OOM kill of a background
  process, which the reset's count shows), the wall deadline (``deadline``), a request's
  timeout (``timeout``) or output cap (``output``);
* its supervisor could not serve another run: its channel broke or the engine failed
  (``broken``), the reset was refused or not verified (``unverified``);
* it could not finish another whole run before its labelled deadline (``expired``); or the
  pool is closing (``closing``).

Usage of a reused run is its own: CPU time is re-based on the counter the reset reports;
peak memory is re-based where the host can reset the cgroup's peak (cgroup v1, a worker
that sees the host's cgroups), and is otherwise ``None`` with the reason
(:func:`rebased_usage`). Under gVisor usage is not measured at all (see ``conduit``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar, cast

from evalfleet.sandbox.docker.usage import CGROUP_ROOT

log = logging.getLogger(__name__)
T = TypeVar("T")

#: Why a used sandbox was removed instead of reused (the values of the metric's label).
DISCARD_REASONS = ("runs", "oom", "deadline", "timeout", "output", "broken", "unverified",
                   "expired", "closing")
#: Why a reused run's peak memory is ``None``.
PEAK_NOT_REBASED = ("memory_peak_bytes: not this run's own: the sandbox served earlier runs "
                    "and its cgroup's peak could not be reset from the worker")
#: Why a reused run's CPU time is ``None``.
CPU_NOT_REBASED = ("cpu_seconds: not this run's own: the sandbox served earlier runs and its "
                   "reset reported no CPU counter")


@dataclass(frozen=True)
class ResetOutcome:
    """The supervisor's answer to one reset."""

    verified: bool
    reason: str = ""
    """Why the reset is not verified (``""`` when it is)."""
    rounds: int = 0
    """Clean-and-compare rounds it took (0: nothing differed from the start)."""
    cpu_ns: int | None = None
    """The sandbox cgroup's CPU time after the reset (the next run's zero)."""
    oom_kills: int | None = None
    """OOM kills in the sandbox's memory cgroup since it started."""
    duration_s: float = 0.0
    """Round trip of the reset as the host saw it."""


def parse_answer(text: str, duration_s: float = 0.0) -> ResetOutcome:
    """The supervisor's ``c`` answer: ``0 key=value...`` or ``1 why``."""
    status, _, rest = text.partition(" ")
    if status != "0":
        return ResetOutcome(False, rest or "the supervisor did not say why",
                            duration_s=duration_s)
    fields = dict(item.partition("=")[::2] for item in rest.split())
    return ResetOutcome(True, rounds=_int(fields.get("rounds")) or 0,
                        cpu_ns=_counter(fields.get("cpu_ns")),
                        oom_kills=_counter(fields.get("oom_kill")), duration_s=duration_s)


def _int(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def _counter(value: str | None) -> int | None:
    """A counter of the answer; ``None`` where the supervisor could not read it (-1)."""
    found = _int(value)
    return found if found is not None and found >= 0 else None


@dataclass(frozen=True)
class Reuse:
    """Where one run stands in its container's life (given to its sandbox)."""

    run: int = 1
    """1 for a fresh container; n for its n-th run."""
    cpu_base_s: float | None = None
    """The cgroup's CPU time when the run started (after the last reset)."""
    peak_rebased: bool = False
    """Whether the cgroup's peak memory was reset after the last reset."""
    environments: dict[Hashable, Any] = field(default_factory=dict)
    """The container's measures taken before seeding (environment probes' reports), by
    key: the container's own (its pool entry's), filled by its runs and dropped with it. A
    verified reset puts back everything a probe looks at (the workspace empty, writable and
    as large as at the start; the image's tools on a read-only root), so a later run's probe
    of the same key is answered here, without a request."""


def remembered(reused: Reuse, key: Hashable, measure: Callable[[], T]) -> T:
    """An earlier run's measure of ``key`` in this container, before seeding
    (:attr:`Reuse.environments`), else ``measure()``'s, then kept there
    (:meth:`sandbox.base.Sandbox.pristine`).

    Raises:
        whatever ``measure`` raises (nothing is kept then).
    """
    if key in reused.environments:
        return cast(T, reused.environments[key])
    found = reused.environments[key] = measure()
    return found


def rebased_usage(found: dict[str, float], reuse: Reuse) -> tuple[dict[str, float | None], str]:
    """The counters of a run's container made the run's own; with why any is ``None``."""
    if reuse.run == 1 or not found:
        return dict(found), ""
    usage: dict[str, float | None] = dict(found)
    why: list[str] = []
    if "cpu_seconds" in found:
        if reuse.cpu_base_s is None:
            usage["cpu_seconds"] = None
            why.append(CPU_NOT_REBASED)
        else:
            usage["cpu_seconds"] = max(0.0, found["cpu_seconds"] - reuse.cpu_base_s)
    if "memory_peak_bytes" in found and not reuse.peak_rebased:
        usage["memory_peak_bytes"] = None
        why.append(PEAK_NOT_REBASED)
    return usage, "; ".join(why)


def reset_peak(container_id: str, root: Path = CGROUP_ROOT) -> bool:
    """Reset the container's peak-memory counter from the host, where that is possible
    (cgroup v1's ``memory.max_usage_in_bytes``, writable by a worker that sees the host's
    cgroups); whether it was. (cgroup v2's ``memory.peak`` resets only for the file
    descriptor that writes it, so there is nothing to do there.)"""
    path = root / "memory" / "docker" / container_id / "memory.max_usage_in_bytes"
    try:
        path.write_text("0")
    except OSError:
        return False
    return True


def limits_hit(sandbox: Any) -> str | None:
    """The discard reason a run's limits give its sandbox (``None``: none was hit)."""
    conduit = sandbox.conduit
    if conduit.deadline_exceeded:
        return "deadline"
    if conduit.ended_by is not None or "oom" in conduit.hits:
        return "oom"
    for hit in ("timeout", "output"):
        if hit in conduit.hits:
            return hit
    return None


def reset(sandbox: Any) -> ResetOutcome:
    """Reset ``sandbox`` through its supervisor (never raises: a failure is unverified)."""
    channel = sandbox.channel
    started = time.monotonic()
    try:
        answer = channel.reset()
    except OSError as error:
        return ResetOutcome(False, f"the supervisor went away: {error}")
    return parse_answer(answer, time.monotonic() - started)


#: What the start-up check leaves in a sandbox before resetting it: a directory closed to
#: everyone but its owner, a FIFO, files in ``/tmp`` and ``/dev/shm``, a background process.
PROBE_LEFTOVERS = ("mkdir -p d/e && echo x > d/e/f && chmod 000 d && mkfifo /tmp/fifo && "
                   "echo x > /dev/shm/s && { sleep 300 & } && echo left")
#: Lists whatever a probe's reset left (nothing, when it worked).
PROBE_LOOK = "find /workspace /tmp /dev/shm -mindepth 1"


def probe(factory: Any, profile: Any, deadline_s: float = 120.0) -> str:
    """Whether resets of ``profile``'s sandboxes verify on this engine: ``""`` when one
    sandbox, given :data:`PROBE_LEFTOVERS` and reset, is verified and found empty; else
    why not (the image's supervisor cannot reset, the reset is refused or unverified).

    Raises:
        SandboxConfigError: the image is missing.
        SandboxUnavailable: the engine is not there.
    """
    from evalfleet.sandbox.command import Command
    from evalfleet.sandbox.docker.limits import Ownership

    if not factory.reusable(profile):
        facts = factory.image(profile.image)
        if facts.supervisor is None:
            return f"{profile.image} has no evalfleet supervisor (it is driven by exec)"
        if not facts.resets:
            return (f"{profile.image}'s supervisor speaks protocol {facts.protocol}, which "
                    f"cannot reset a sandbox (rebuild it: scripts/build-images.sh)")
        return "the profile has network access"
    owner = Ownership(factory.worker, "reuse-probe", time.time() + deadline_s, pooled=True)
    container, line = factory.start(profile, owner)
    sandbox = factory.sandbox(container, line, profile, run_id="reuse-probe")
    try:
        left = sandbox.exec(Command(PROBE_LEFTOVERS, timeout_s=30))
        if left.stdout != b"left\n":
            return f"the probe's command failed: {left.stderr.decode(errors='replace')[:200]}"
        outcome = sandbox.reset()
        if not outcome.verified:
            return f"the reset was not verified: {outcome.reason}"
        found = sandbox.exec(Command(PROBE_LOOK, timeout_s=30))
        if found.exit_code != 0 or found.stdout:
            return f"the reset left {found.stdout[:200]!r} ({found.stderr[:200]!r})"
        return ""
    finally:
        sandbox.conduit.close()
