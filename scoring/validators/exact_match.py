"""exact_match: byte-for-byte equality, no trimming or folding (docs/scoring.md §5.1). Config
ignored.

AgentClash gives no reason either way (``applyValidator``: ``reason`` stays ``""``)."""

from __future__ import annotations

from .base import CheckInput, Kind, Outcome


def check(given: CheckInput) -> Outcome:
    return Outcome.check(given.actual == given.expected, "", "")


KIND = Kind("exact_match", check)
