"""A run's inputs, decoded for scoring: events, cases and an external human preference.

Nothing here guesses: an item that does not decode is an :class:`InputError` finding with
its field path (``events[3].occurred_at``), and every finding is reported at once.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from ..errors import FieldError, InputError
from ..record.events import Event
from ..spec.cases import Case

M = TypeVar("M", bound=BaseModel)


def run_inputs(events: Iterable[Any], cases: Iterable[Any] | None,
               human_preference: Any) -> tuple[list[Event], list[Case]]:
    """The run's events and cases, decoded; ``human_preference`` checked to be in [0, 1].

    Raises:
        InputError: listing every item that does not decode, and a bad preference.
    """
    problems: list[FieldError] = []
    decoded = _decoded("events", events, Event, problems)
    case_list = _decoded("cases", cases or [], Case, problems)
    if human_preference is not None and not _unit(human_preference):
        problems.append(FieldError("human_preference", "must be a number between 0 and 1"))
    if problems:
        raise InputError(problems)
    return decoded, case_list


def decode_cases(cases: Iterable[Any]) -> list[Case]:
    """Case documents as :class:`Case` objects.

    Raises:
        InputError: listing every case field that does not decode.
    """
    problems: list[FieldError] = []
    out = _decoded("cases", cases, Case, problems)
    if problems:
        raise InputError(problems)
    return out


def _unit(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and \
        math.isfinite(value) and 0 <= value <= 1


def _decoded(name: str, items: Iterable[Any], model: type[M],
             problems: list[FieldError]) -> list[M]:
    out: list[M] = []
    for i, item in enumerate(items):
        if isinstance(item, model):
            out.append(item)
            continue
        try:
            out.append(model.model_validate(item))
        except ValidationError as err:
            problems.extend(_problem(f"{name}[{i}]", e) for e in err.errors())
        except RecursionError:
            problems.append(FieldError(f"{name}[{i}]", "is nested too deeply"))
    return out


def _problem(root: str, error: Any) -> FieldError:
    path = root + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error["loc"])
    return FieldError(path, str(error["msg"]))
