"""boolean_assert: both sides read as booleans, pass iff equal (docs/scoring.md §5.4). Config
ignored.

Each side is trimmed (Unicode whitespace) and lower-cased; ``true``/``1``/``yes`` are
true, ``false``/``0``/``no`` are false, anything else is an error (an unreadable expected
is the pack's mistake, an unreadable actual the candidate's; the actual is read first).
No reason on pass or fail, as in AgentClash's ``applyValidator``.
"""

from __future__ import annotations

from ..compat.textnorm import go_quote, trim
from .base import CheckInput, Kind, Outcome

_WORDS = {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False}


def parse_boolean(text: str) -> bool | None:
    """The boolean a text stands for, or None when it is not one of the six words."""
    return _WORDS.get(trim(text).lower())


def check(given: CheckInput) -> Outcome:
    expected, actual = given.expected or "", given.actual or ""
    expected_value, actual_value = parse_boolean(expected), parse_boolean(actual)
    if actual_value is None:
        return Outcome.error("parse actual boolean assertion value: unsupported boolean value "
                             f"{go_quote(actual)}")
    if expected_value is None:
        return Outcome.error("parse expected boolean assertion value: unsupported boolean value "
                             f"{go_quote(expected)}")
    return Outcome.check(actual_value == expected_value, "", "")


KIND = Kind("boolean_assert", check)
