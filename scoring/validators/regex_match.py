"""regex_match: the expected text is an RE2 pattern searched in the actual (§5.3)."""

from __future__ import annotations

from ..patterns import PatternError, search
from .base import CheckInput, Kind, Outcome


def check(given: CheckInput) -> Outcome:
    try:
        matched = search(given.expected or "", given.actual or "")
    except PatternError as err:
        return Outcome.error(f"invalid regex pattern: {err}", "pack_error")
    return Outcome.check(matched, "actual matches pattern", "actual does not match pattern")


KIND = Kind("regex_match", check)
