"""The forwarders' side of admission: park each run in its waiting room, or refuse it
when its tenant refuses runs over quota (:mod:`tasks.admission`).

Admission is on when the settings say ``on``, or, with ``auto`` (the default), once the
fleet has a tenant: a fleet without tenants sends runs straight to their queues, as
before. The tenants' shares are read again every ``refresh_s``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Literal

from .. import tenancy
from ..lifecycle import Lifecycle, Publication
from ..messages import RunResult
from ..platform.cancels import Seal, unsigned
from ..redis_keys import REFUSED_KEY, Keyspace
from ..sending import Outgoing
from .room import Parked, Room, WaitingRoom
from .share import Share

Mode = Literal["auto", "on", "off"]


@dataclass
class Parking:
    """Parks runs for the admitter, over the fleet's Redis user."""

    redis: Any
    mode: Mode = "auto"
    fleet_share: Share = field(default_factory=Share)
    seal: Seal = unsigned
    """How a refusal is published: the worker's signer's."""
    ttl_s: int = 7 * 24 * 3600
    refresh_s: float = 5.0
    shares: dict[str, Share] = field(default_factory=dict)
    _read_at: float = float("-inf")

    def __post_init__(self) -> None:
        self.room = WaitingRoom(self.redis)

    @property
    def on(self) -> bool:
        """Whether runs are parked now (see the module)."""
        if self.mode != "auto":
            return self.mode == "on"
        self._refresh()
        return bool(self.shares)

    def share_of(self, keys: Keyspace) -> Share:
        """The share of ``keys``' owner (a tenant removed meanwhile: the default)."""
        return self.fleet_share if keys.tenant is None else self.shares.get(keys.tenant, Share())

    def park(self, runs: list[tuple[Outgoing, str | None]]) -> list[Outgoing]:
        """Park ``runs`` (each with its match), in one round trip; refuse those over a
        refusing tenant's quota. Returns those that cannot wait: a request without a run
        id, which is sent as it is (its worker rejects it)."""
        self._refresh()
        parked = [(run, match) for run, match in runs if run.run_id]
        minute = int(time.time() // 60)
        with self.redis.pipeline(transaction=False) as pipe:
            for run, match in parked:
                self.room.park(Room(run.queue, run.keys), str(run.run_id), match or "",
                               _parked(run), self.share_of(run.keys), minute, client=pipe)
            replies = pipe.execute()
        for (run, match), reply in zip(parked, replies, strict=True):
            if isinstance(reply, bytes | str):
                self._refuse(run, match, _text(reply))
        return [run for run, _ in runs if not run.run_id]

    def _refuse(self, run: Outgoing, match: str | None, quota: str) -> None:
        """Publish ``run`` ``rejected``: its tenant's ``quota`` is reached."""
        share, run_id = self.share_of(run.keys), str(run.run_id)
        reason = (f"refused: tenant {run.keys.tenant!r} allows at most "
                  f"{share.describe(quota)}")
        result = RunResult(run_id=run_id, outcome="rejected", reason=reason, match=match)
        Lifecycle(self.redis, self.ttl_s, run.keys).publish(
            Publication(run_id, "rejected", match=match or ""), self.seal(result))
        self.redis.hincrby(REFUSED_KEY, f"{run.keys.owner} {quota}", 1)

    def _refresh(self) -> None:
        if time.monotonic() - self._read_at >= self.refresh_s:
            self.shares = {t.name: t.share for t in tenancy.all_tenants(self.redis)}
            self._read_at = time.monotonic()


def _parked(run: Outgoing) -> Parked:
    return Parked(run.entry, run.queue, max(0, min(9, run.priority)), run.enqueued_at,
                  run.request)


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
