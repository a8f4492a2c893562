"""regex_match: the expected text is an RE2 pattern searched in the actual (docs/scoring.md §5.3).

No reason on pass or fail (AgentClash's ``applyValidator``); a pattern Go's ``regexp``
rejects is ``invalid regex pattern: error parsing regexp: …`` (a pack error)."""

from __future__ import annotations

from ..compat.patterns import PatternError, search
from .base import CheckInput, Kind, Outcome


def check(given: CheckInput) -> Outcome:
    try:
        matched = search(given.expected or "", given.actual or "")
    except PatternError as err:
        return Outcome.error(f"invalid regex pattern: {err}")
    return Outcome.check(matched, "", "")


KIND = Kind("regex_match", check)
