"""What the load-time rules share: the finding list, key and threshold checks, messages."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ..errors import FieldError

ROOT = "evaluation_spec"
IN_UNIT = "must be between 0 and 1"
POSITIVE = "must be greater than 0"
NON_NEGATIVE = "must be greater than or equal to 0"

Findings = list[FieldError]


def unique_keys(keys: Iterable[str], path: Callable[[int], str], out: Findings) -> None:
    """``is required`` for blank keys, ``must be unique`` for every repeat after the first."""
    seen: set[str] = set()
    for i, key in enumerate(keys):
        if not key:
            out.append(FieldError(f"{path(i)}.key", "is required"))
        elif key in seen:
            out.append(FieldError(f"{path(i)}.key", "must be unique"))
        seen.add(key)


def threshold(value: float | None, required: bool, field: str) -> Findings:
    """A pass_threshold: required for gates, and within [0, 1] whenever set."""
    if value is None:
        return [FieldError(field, "is required when gate is true")] if required else []
    return [] if 0 <= value <= 1 else [FieldError(field, IN_UNIT)]
