"""The scoring package's errors: whose fault it is decides the type.

A candidate's bad output is never an exception here: it is a validator result (``fail``,
``unavailable`` or ``error``). Exceptions are for a spec that cannot be evaluated at all.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple


class FieldError(NamedTuple):
    """One validation finding: the dotted field path and what is wrong with it."""

    field: str
    message: str
    line: int | None = None
    """The source line of the offending field, when the spec came from YAML text."""

    def __str__(self) -> str:
        where = f" (line {self.line})" if self.line else ""
        return f"{self.field} {self.message}{where}"


class ScoringError(Exception):
    """Base of every exception the scoring package raises."""


class SpecError(ScoringError):
    """The evaluation spec (or pack) is invalid; nothing was evaluated.

    ``errors`` lists every finding (validation collects, it does not stop at the first);
    ``str(error)`` joins them AgentClash's way: ``"<field> <message>; <field> <message>"``.
    """

    def __init__(self, errors: Iterable[FieldError]) -> None:
        self.errors: list[FieldError] = list(errors)
        super().__init__("; ".join(f"{e.field} {e.message}" for e in self.errors))

    @classmethod
    def single(cls, field: str, message: str, line: int | None = None) -> SpecError:
        """A spec error with one finding."""
        return cls([FieldError(field, message, line)])


class InputError(SpecError):
    """A run's inputs (events, cases, human preference) cannot be scored; nothing was.

    Like :class:`SpecError`, ``errors`` lists every finding with its field path
    (``events[3].occurred_at``, ``human_preference``).
    """
