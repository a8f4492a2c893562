"""An owner's share of the fleet: its weight, its quotas, and what it does over them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

OverQuota = Literal["wait", "refuse"]
"""What becomes of a run over its tenant's quota: it waits its turn, or it is refused."""
QUOTAS = ("max_in_flight", "max_per_minute")
"""The quotas, by the name a held key or a refusal gives."""


@dataclass(frozen=True)
class Share:
    """A tenant's weight and quotas (the fleet's own runs: a weight, no quota)."""

    weight: float = 1.0
    """Its runs are admitted in proportion to this while several owners wait."""
    max_in_flight: int | None = None
    """At most this many of its runs admitted and not yet published (None: no cap)."""
    max_per_minute: int | None = None
    """At most this many of its runs admitted per minute (None: no cap)."""
    over_quota: OverQuota = "wait"

    def __post_init__(self) -> None:
        if not self.weight > 0:
            raise ValueError(f"weight {self.weight}: must be above 0")
        for name in QUOTAS:
            value = getattr(self, name)
            if value is not None and value < 1:
                raise ValueError(f"{name} {value}: must be at least 1 (or no quota)")
        if self.over_quota not in ("wait", "refuse"):
            raise ValueError(f"over_quota {self.over_quota!r}: must be 'wait' or 'refuse'")

    def room(self, in_flight: int, this_minute: int) -> tuple[int | None, str | None]:
        """How many more runs its quotas let be admitted now (None: no limit), and the
        quota that admits none (None while some may be)."""
        left = {name: limit - used for name, limit, used in
                (("max_in_flight", self.max_in_flight, in_flight),
                 ("max_per_minute", self.max_per_minute, this_minute)) if limit is not None}
        if not left:
            return None, None
        quota = min(left, key=lambda name: left[name])
        return max(0, left[quota]), quota if left[quota] <= 0 else None

    def describe(self, quota: str) -> str:
        """A quota in words, for a refusal's reason and a held run's status."""
        limit = getattr(self, quota)
        return (f"{limit} runs in flight ({quota})" if quota == "max_in_flight"
                else f"{limit} runs admitted per minute ({quota})")
