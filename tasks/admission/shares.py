"""Who is admitted next: stride scheduling over the owners with runs waiting (pure).

Each owner has a *pass*; the owner with the lowest pass among those that may be admitted
gets the next run, and its pass grows by ``1 / weight``. While several owners wait, each is
admitted in proportion to its weight; an owner that was not waiting starts at the lowest
pass of those that were (it gets its share from now on, not a burst for the time it was
away).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

Grant = tuple[str, str, int]
"""``(queue, owner, how many)``: runs to take from one waiting room."""


@dataclass
class Strides:
    """The owners' passes, kept by the admitter across its steps."""

    passes: dict[str, float] = field(default_factory=dict)
    clock: float = 0.0
    """The pass of the owner admitted last: no owner waiting now is behind it, so an owner
    that comes back (or comes first) starts there."""

    def pick(self, owners: list[str]) -> str:
        """The owner among ``owners`` (a non-empty list) to admit next."""
        for owner in owners:
            self.passes[owner] = max(self.passes.get(owner, self.clock), self.clock)
        chosen = min(owners, key=lambda owner: (self.passes[owner], owner))
        self.clock = self.passes[chosen]
        return chosen

    def charge(self, owner: str, runs: int, weight: float) -> None:
        """``owner`` was admitted ``runs`` runs."""
        self.passes[owner] = self.passes.get(owner, self.clock) + runs / weight


def plan(rooms: Mapping[str, int], waiting: Mapping[tuple[str, str], int],
         allowed: Mapping[str, int | None], weights: Mapping[str, float],
         strides: Strides) -> list[Grant]:
    """What to admit now: for each queue, up to its free ``rooms`` runs, shared among
    the owners waiting for it (``waiting``: by ``(queue, owner)``) that their quotas
    still admit (``allowed``: by owner, None for no limit), by stride."""
    left = dict(allowed)
    grants: dict[tuple[str, str], int] = {}
    for queue, room in sorted(rooms.items()):
        counts = {o: n for (q, o), n in waiting.items() if q == queue and n > 0}
        while room > 0:
            owners = sorted(o for o, n in counts.items() if n > 0 and left.get(o) != 0)
            if not owners:
                break
            owner = strides.pick(owners)
            runs = min(room, counts[owner], _cap(left.get(owner))) if len(owners) == 1 else 1
            strides.charge(owner, runs, weights.get(owner, 1.0))
            grants[(queue, owner)] = grants.get((queue, owner), 0) + runs
            room, counts[owner] = room - runs, counts[owner] - runs
            if left.get(owner) is not None:
                left[owner] = int(left[owner] or 0) - runs
    return [(queue, owner, n) for (queue, owner), n in grants.items()]


def _cap(value: int | None) -> int:
    return value if value is not None else 1 << 30
