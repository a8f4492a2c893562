"""contains: case-sensitive substring; an empty expected always passes (docs/scoring.md §5.2).

No reason either way, as in AgentClash's ``applyValidator``."""

from __future__ import annotations

from .base import CheckInput, Kind, Outcome


def check(given: CheckInput) -> Outcome:
    expected, actual = given.expected or "", given.actual or ""
    return Outcome.check(expected in actual, "", "")


KIND = Kind("contains", check)
