"""numeric_match: numbers equal, or within a tolerance (docs/scoring.md §5.8). Strict config,
binary score.

Parsing: without ``extract_number`` the trimmed text must be a Go float literal
(:func:`scoring.compat.gofloat.parse_float`: ``+5``, ``.5``, ``1e3``, ``inf``, ``nan`` and hex
floats parse; ``1_000`` and ``1,000`` do not). With it, currency marks, commas and ``%``
are removed and the leftmost number (``[+-]?(?:\\d+(?:\\.\\d+)?|\\.\\d+)(?:[eE][+-]?\\d+)?``)
is taken. ``significant_digits`` rounds both sides half away from zero.

Decision: no tolerance ⇒ exact float equality; else pass iff within the absolute OR the
relative tolerance (relative difference against 0 is 0 when equal, else +∞). The legacy
pair ``tolerance_mode`` (``absolute``|``relative``, default relative) + ``tolerance``
(default 0.001) maps onto the new fields; mixing the two styles is an error.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

from ..compat.gofloat import parse_float, round_significant
from ..compat.patterns import compile_pattern
from ..compat.textform import go_number
from ..compat.textnorm import go_quote, strip_currency, trim
from ..errors import FieldError
from .base import CheckInput, Kind, Outcome
from .graded import GoStrictConfig

NUMBER_PATTERN = r"[+-]?(?:\d+(?:\.\d+)?|\.\d+)(?:[eE][+-]?\d+)?"
MIX_ERROR = "cannot mix tolerance_mode/tolerance with absolute_tolerance/relative_tolerance"
MODE_ERROR = 'tolerance_mode must be either "absolute" or "relative"'
NOT_NEGATIVE = "must be greater than or equal to 0"


class NumericMatchConfig(GoStrictConfig):
    absolute_tolerance: float | None = None
    relative_tolerance: float | None = None
    extract_number: bool = False
    significant_digits: int | None = None
    tolerance_mode: str = ""
    """Legacy alias: ``absolute`` or ``relative`` (default relative when legacy is used)."""
    tolerance: float | None = None
    """Legacy alias: the tolerance for ``tolerance_mode`` (default 0.001)."""


class Tolerances(NamedTuple):
    """The effective tolerances after the legacy aliases are mapped."""

    absolute: float | None
    relative: float | None


def tolerances(config: NumericMatchConfig) -> Tolerances:
    """Resolve legacy aliases into (absolute, relative).

    Raises:
        ValueError: when legacy and new fields are mixed, or tolerance_mode is unknown.
    """
    legacy = config.tolerance is not None or trim(config.tolerance_mode) != ""
    if not legacy:
        return Tolerances(config.absolute_tolerance, config.relative_tolerance)
    if config.absolute_tolerance is not None or config.relative_tolerance is not None:
        raise ValueError(MIX_ERROR)
    mode = trim(config.tolerance_mode) or "relative"
    value = 0.001 if config.tolerance is None else config.tolerance
    if mode == "absolute":
        return Tolerances(value, None)
    if mode == "relative":
        return Tolerances(None, value)
    raise ValueError(MODE_ERROR)


class Parsed(NamedTuple):
    """A parsed side: the number and the text it was read from."""

    value: float
    text: str


def parse_number(raw: str, extract: bool) -> Parsed:
    """Read one side as a number (see the module docstring).

    Raises:
        ValueError: when no number can be read.
    """
    if not extract:
        token = trim(raw)
        return Parsed(parse_float(token), token)
    cleaned = trim(strip_currency(raw).replace(",", "").replace("%", ""))
    match = compile_pattern(NUMBER_PATTERN).search(cleaned)
    if match is None:
        raise ValueError(f"no numeric value found in {go_quote(raw)}")
    return Parsed(parse_float(match.group(0)), match.group(0))


def within(actual: float, expected: float, limits: Tolerances) -> bool:
    """The decision: exact equality without tolerances, else abs OR rel tolerance."""
    if limits.absolute is None and limits.relative is None:
        return actual == expected
    difference = abs(actual - expected)
    absolute_ok = limits.absolute is not None and difference <= limits.absolute
    relative_ok = limits.relative is not None and relative(difference, expected) <= limits.relative
    return absolute_ok or relative_ok


def relative(difference: float, expected: float) -> float:
    """|a − e| / |e|; against 0 it is 0 when equal, else +∞."""
    if expected != 0:
        return difference / abs(expected)
    return 0.0 if difference == 0 else math.inf


def check(given: CheckInput) -> Outcome:
    config: NumericMatchConfig = given.config
    try:
        limits = tolerances(config)
    except ValueError as err:
        return Outcome.error(f"parse numeric_match config: {err}")
    sides = []
    for side, raw in (("expected", given.expected or ""), ("actual", given.actual or "")):
        try:
            sides.append(parse_number(raw, config.extract_number))
        except ValueError as err:
            evidence = {f"{side}_raw": raw, "extract_number": config.extract_number}
            return Outcome.error(f"parse {side} numeric value: {err}", **evidence)
    expected, actual = sides
    return _decide(config, limits, actual, expected)


def _decide(config: NumericMatchConfig, limits: Tolerances, actual: Parsed,
            expected: Parsed) -> Outcome:
    a, e = actual.value, expected.value
    digits = config.significant_digits
    if digits is not None and digits > 0:
        a, e = round_significant(a, digits), round_significant(e, digits)
    evidence = {"actual_parsed": actual.text, "expected_parsed": expected.text,
                "actual_numeric": a, "expected_numeric": e,
                "absolute_difference": abs(a - e), "extract_number": config.extract_number,
                "absolute_tolerance": limits.absolute, "relative_tolerance": limits.relative}
    return Outcome.check(within(a, e, limits), "",
                         f"actual {go_number(a)} is not within tolerance of expected "
                         f"{go_number(e)}", **evidence)


def config_rules(config: Any, path: str) -> list[FieldError]:
    """Tolerance style, non-negative tolerances, significant_digits > 0."""
    try:
        limits = tolerances(config)
    except ValueError as err:
        return [FieldError(path, str(err))]
    errors = [FieldError(f"{path}.{name}_tolerance", NOT_NEGATIVE)
              for name, value in (("absolute", limits.absolute), ("relative", limits.relative))
              if value is not None and value < 0]
    if config.significant_digits is not None and config.significant_digits <= 0:
        errors.append(FieldError(f"{path}.significant_digits", "must be greater than 0"))
    return errors


KIND = Kind("numeric_match", check, NumericMatchConfig, "strict", config_rules=config_rules,
            go_struct="numericMatchConfig")
