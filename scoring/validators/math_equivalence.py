"""math_equivalence: two answers are the same expression, symbolically or numerically
(docs/scoring.md §5.11).

Decision, as AgentClash makes it:

1. symbolic mode, both sides parse and their canonical keys are equal ⇒ pass
   (``mode_used: symbolic``);
2. else, in numeric mode or with ``numeric_fallback`` (default true): evaluate both as
   float64; if both evaluate, pass iff ``|a − e| ≤ tolerance`` (``mode_used`` ``numeric`` or
   ``numeric_fallback``); if evaluation fails, error in numeric mode or when either side did
   not parse, otherwise fall through;
3. a side that did not parse ⇒ error; otherwise fail "symbolic forms are not equivalent".

The language and canonical form are in :mod:`scoring.compat.mathexpr` /
:mod:`scoring.compat.mathcanon`, the LaTeX normalization in :mod:`scoring.compat.mathnorm`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..compat.mathcanon import NotNumeric, canonical, evaluate, key
from ..compat.mathexpr import Expr, MathSyntaxError, parse
from ..compat.mathnorm import normalize
from ..errors import FieldError
from .base import CheckInput, Kind, Outcome, StrictConfig

MODES = ("symbolic", "numeric")
#: The longest expression read from the candidate's side (evalfleet's limit; AgentClash has
#: none). Normalizing rewrites the text once per LaTeX command, and exact numbers grow
#: without bound: a 2 MiB answer held a worker for hours (found by a red-team pass). Past
#: it the answer is unreadable: a forfeit, as any answer that is not an expression.
MAX_ANSWER_CHARACTERS = 10_000
DEFAULT_TOLERANCE = 1e-6
DEFAULT_DELIMITER = "####"


class MathEquivalenceConfig(StrictConfig):
    """``{extract_answer, answer_delimiter, comparison_mode, numeric_fallback, tolerance}``."""

    extract_answer: bool = False
    answer_delimiter: str = ""
    """Defaults to ``####`` when extract_answer is set and this is blank."""
    comparison_mode: str = ""
    """``symbolic`` (default) or ``numeric``."""
    numeric_fallback: bool | None = None
    """Defaults to true; always true in numeric mode."""
    tolerance: float | None = None
    """Absolute tolerance of numeric comparison (default 1e-6, ≥ 0)."""

    @property
    def mode(self) -> str:
        return self.comparison_mode.strip() or "symbolic"

    @property
    def delimiter(self) -> str | None:
        if not self.extract_answer:
            return None
        return self.answer_delimiter.strip() or DEFAULT_DELIMITER

    @property
    def fallback(self) -> bool:
        return self.mode == "numeric" or self.numeric_fallback is not False

    @property
    def effective_tolerance(self) -> float:
        return DEFAULT_TOLERANCE if self.tolerance is None else self.tolerance


def config_rules(config: MathEquivalenceConfig, path: str) -> list[FieldError]:
    """Load-time rules: a known comparison_mode, a non-negative tolerance."""
    errors = []
    if config.mode not in MODES:
        errors.append(FieldError(f"{path}.comparison_mode", 'must be "symbolic" or "numeric"'))
    if config.tolerance is not None and config.tolerance < 0:
        errors.append(FieldError(f"{path}.tolerance", "must be greater than or equal to 0"))
    return errors


@dataclass
class _Side:
    """One answer: normalized text, its parse tree or parse error."""

    text: str
    tree: Expr | None = None
    parse_error: str = ""


def _side(normalized: str) -> _Side:
    try:
        return _Side(normalized, parse(normalized))
    except MathSyntaxError as err:
        return _Side(normalized, parse_error=str(err))
    except RecursionError:
        return _Side(normalized, parse_error="expression is too deeply nested")


def nests_within_limits(expression: str) -> bool:
    """Whether ``expression`` parses without passing the depth limit (a syntax error is
    within it: that is not nesting)."""
    return _side(expression).parse_error != "expression is too deeply nested"


def check(given: CheckInput) -> Outcome:
    config: MathEquivalenceConfig = given.config or MathEquivalenceConfig()
    if config.mode not in MODES:
        return Outcome.error('parse math_equivalence config: comparison_mode must be '
                             '"symbolic" or "numeric"')
    actual, expected = given.actual or "", given.expected or ""
    try:
        sides = _normalized(actual, expected, config.delimiter)
    except _NormalizeError as err:
        return err.outcome
    evidence = _evidence(config, actual, expected, sides)
    try:
        return _decide(config, *sides, evidence)
    except RecursionError:
        return Outcome.error("evaluate math_equivalence expressions: expression is too deeply "
                             "nested", **evidence)


class _NormalizeError(Exception):
    def __init__(self, outcome: Outcome) -> None:
        self.outcome = outcome


def _normalized(actual: str, expected: str, delimiter: str | None) -> tuple[_Side, _Side]:
    try:
        actual_text = normalize(actual, delimiter, MAX_ANSWER_CHARACTERS)
    except MathSyntaxError as err:
        raise _NormalizeError(Outcome.error(f"normalize actual math expression: {err}",
                                            actual_raw=actual, error=str(err))) from None
    try:
        expected_text = normalize(expected, delimiter)
    except MathSyntaxError as err:
        raise _NormalizeError(Outcome.error(f"normalize expected math expression: {err}",
                                            expected_raw=expected, error=str(err))) from None
    return _side(actual_text), _side(expected_text)


def _evidence(config: MathEquivalenceConfig, actual: str, expected: str,
              sides: tuple[_Side, _Side]) -> dict[str, Any]:
    return {
        "actual_raw": actual, "expected_raw": expected, "normalized_actual": sides[0].text,
        "normalized_expected": sides[1].text, "comparison_mode": config.mode,
        "extract_answer": config.extract_answer, "answer_delimiter": config.delimiter or "",
        "numeric_fallback": config.fallback, "tolerance": config.effective_tolerance,
    }


def _decide(config: MathEquivalenceConfig, actual: _Side, expected: _Side,
            evidence: dict[str, Any]) -> Outcome:
    if config.mode == "symbolic" and actual.tree is not None and expected.tree is not None:
        evidence["canonical_actual"] = key(canonical(actual.tree))
        evidence["canonical_expected"] = key(canonical(expected.tree))
        if evidence["canonical_actual"] == evidence["canonical_expected"]:
            evidence["mode_used"] = "symbolic"
            return Outcome.passed(**evidence)
    _record_parse_errors(actual, expected, evidence)
    if config.fallback:
        outcome = _numeric(config, actual, expected, evidence)
        if outcome is not None:
            return outcome
    if actual.parse_error or expected.parse_error:
        return Outcome.error("parse math_equivalence expressions: "
                             + _joined(actual.parse_error, expected.parse_error), **evidence)
    return Outcome.failed("symbolic forms are not equivalent", **evidence)


def _record_parse_errors(actual: _Side, expected: _Side, evidence: dict[str, Any]) -> None:
    if actual.parse_error:
        evidence["actual_parse_error"] = actual.parse_error
    if expected.parse_error:
        evidence["expected_parse_error"] = expected.parse_error


def _numeric(config: MathEquivalenceConfig, actual: _Side, expected: _Side,
             evidence: dict[str, Any]) -> Outcome | None:
    """The numeric comparison, or None to fall through to the symbolic verdict."""
    actual_value, actual_error = _value(actual)
    expected_value, expected_error = _value(expected)
    if actual_value is not None and expected_value is not None:
        return _within(config, actual_value, expected_value, evidence)
    if actual_error:
        evidence["actual_numeric_error"] = actual_error
    if expected_error:
        evidence["expected_numeric_error"] = expected_error
    if config.mode == "numeric" or actual.parse_error or expected.parse_error:
        detail = _joined(actual.parse_error, expected.parse_error, actual_error, expected_error)
        return Outcome.error(f"evaluate math_equivalence expressions: {detail}", **evidence)
    return None


def _value(side: _Side) -> tuple[float | None, str]:
    if side.tree is None:
        return None, side.parse_error
    try:
        return evaluate(side.tree), ""
    except NotNumeric as err:
        return None, str(err)


def _within(config: MathEquivalenceConfig, actual: float, expected: float,
            evidence: dict[str, Any]) -> Outcome:
    difference, tolerance = abs(actual - expected), config.effective_tolerance
    evidence.update(numeric_actual=actual, numeric_expected=expected,
                    absolute_difference=difference,
                    mode_used="numeric" if config.mode == "numeric" else "numeric_fallback")
    return Outcome.check(difference <= tolerance, "",
                         f"numeric values differ by {_go_g(difference)} which exceeds "
                         f"tolerance {_go_g(tolerance)}", **evidence)


def _go_g(value: float) -> str:
    """Go's ``%.10g``."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return f"{value:.10g}"


def _joined(*errors: str) -> str:
    return "; ".join(error for error in errors if error) or "unknown math equivalence error"


KIND = Kind("math_equivalence", check, MathEquivalenceConfig, strictness="strict",
            config_rules=config_rules, go_struct="mathEquivalenceConfig")
