"""numeric_match (docs/scoring.md §5.8): Go float parsing, extraction, tolerances, significant
digits."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from unit.scoring.helpers import run_one

from evalfleet.scoring.compat.gofloat import (
    go_pow10,
    parse_float,
    round_half_away,
    round_significant,
)
from evalfleet.scoring.errors import FieldError
from evalfleet.scoring.validators import numeric_match

PATH = "evaluation_spec.validators[0].config"


@pytest.mark.parametrize(("actual", "expected", "config", "verdict"), [
    ("42", "42", None, "pass"),
    (" 42.0\n", "42", None, "pass"),
    ("+5", "5", None, "pass"),
    (".5", "0.5", None, "pass"),
    ("1e3", "1000", None, "pass"),
    ("0x1.8p1", "3", None, "pass"),
    ("inf", "+Inf", None, "pass"),
    ("nan", "nan", None, "fail"),
    ("42.0001", "42", None, "fail"),
    ("101", "100", {"absolute_tolerance": 1}, "pass"),
    ("102", "100", {"absolute_tolerance": 1}, "fail"),
    ("100.05", "100", {"relative_tolerance": 0.001}, "pass"),
    ("102", "100", {"absolute_tolerance": 1, "relative_tolerance": 0.05}, "pass"),
    ("0", "0", {"relative_tolerance": 0}, "pass"),
    ("0.000001", "0", {"relative_tolerance": 1e9}, "fail"),
    ("100.05", "100", {"tolerance": 0.001}, "pass"),
    ("100.5", "100", {"tolerance_mode": "absolute", "tolerance": 0.5}, "pass"),
    ("100.2", "100", {"tolerance_mode": " relative "}, "fail"),
    ("The answer is $1,234.50 USD", "1234.5", {"extract_number": True}, "pass"),
    ("10 out of 100", "10", {"extract_number": True}, "pass"),
    ("about 45%", "45", {"extract_number": True}, "pass"),
    ("€-3.5e2 EUR", "-350", {"extract_number": True}, "pass"),
    ("3.14159", "3.14", {"significant_digits": 3}, "pass"),
    ("2.5", "3", {"significant_digits": 1}, "pass"),
    ("-2.5", "-3", {"significant_digits": 1}, "pass"),
    ("0.125", "0.13", {"significant_digits": 2}, "pass"),
])
def test_decision(actual: str, expected: str, config: Any, verdict: str) -> None:
    """Exact equality without tolerances, else abs OR rel; score is 1/0."""
    result = run_one("numeric_match", actual, expected, config)

    assert (verdict, 1.0 if verdict == "pass" else 0.0) == (result.verdict,
                                                            result.normalized_score)


@pytest.mark.parametrize(("actual", "expected", "config", "reason_start", "outcome_class"), [
    ("1,000", "1000", None, "parse actual numeric value", "evaluator_error"),
    ("1000", "1,000", None, "parse expected numeric value", "pack_error"),
    ("+nan", "1", None, "parse actual numeric value", "evaluator_error"),
    ("0x10", "16", None, "parse actual numeric value", "evaluator_error"),
    ("1e400", "1", None, "parse actual numeric value", "evaluator_error"),
    ("no digits", "1", {"extract_number": True}, "parse actual numeric value", "evaluator_error"),
    ("1", "1", {"tolerance": 1, "absolute_tolerance": 1}, "parse numeric_match config",
     "pack_error"),
    ("1", "1", {"tolerance_mode": "fuzzy"}, "parse numeric_match config", "pack_error"),
])
def test_errors(actual: str, expected: str, config: Any, reason_start: str,
                outcome_class: str) -> None:
    """Unparseable sides and bad tolerance styles are errors with the Go reason prefix."""
    result = run_one("numeric_match", actual, expected, config)

    assert ("error", outcome_class) == (result.state, result.outcome_class)
    assert result.reason.startswith(reason_start)


def test_fail_reason_uses_go_number_format() -> None:
    """The fail reason prints both numbers with Go's %g."""
    result = run_one("numeric_match", "1000000", "2", None)

    assert result.reason == "actual 1e+06 is not within tolerance of expected 2"


@pytest.mark.parametrize(("config", "errors"), [
    ({"absolute_tolerance": 0.1, "significant_digits": 3}, []),
    ({"absolute_tolerance": -1}, [FieldError(f"{PATH}.absolute_tolerance",
                                             "must be greater than or equal to 0")]),
    ({"relative_tolerance": -1}, [FieldError(f"{PATH}.relative_tolerance",
                                             "must be greater than or equal to 0")]),
    ({"tolerance": -1}, [FieldError(f"{PATH}.relative_tolerance",
                                    "must be greater than or equal to 0")]),
    ({"significant_digits": 0}, [FieldError(f"{PATH}.significant_digits",
                                            "must be greater than 0")]),
    ({"tolerance": 1, "relative_tolerance": 1}, [FieldError(PATH, numeric_match.MIX_ERROR)]),
    ({"tolerance_mode": "exact"}, [FieldError(PATH, numeric_match.MODE_ERROR)]),
])
def test_config_rules(config: dict[str, Any], errors: list[FieldError]) -> None:
    """Load time: non-negative tolerances, significant_digits > 0, no mixing of styles."""
    model, problem = numeric_match.KIND.decode_config(config)

    assert (None, errors) == (problem, numeric_match.config_rules(model, PATH))


@pytest.mark.parametrize(("text", "value"), [
    ("+5", 5.0), (".5", 0.5), ("5.", 5.0), ("1E3", 1000.0), ("-Infinity", -math.inf),
    ("INF", math.inf), ("0X1P-2", 0.25), ("-0x.8p1", -1.0),
    # Go literal underscores (strconv.ParseFloat under Go 1.19, the reference harness):
    ("1_000", 1000.0), ("1e1_0", 1e10), ("0x_1p0", 1.0), ("1.5_0", 1.5), (".5_0", 0.5),
])
def test_go_float_accepts(text: str, value: float) -> None:
    """Go's ParseFloat grammar: signs, bare points, exponents, inf, hex floats and digit
    separators where Go's literal syntax allows them."""
    assert value == parse_float(text)


@pytest.mark.parametrize("text", ["1__0", "_1", "1_", "1_.5", "._5", "1,000", " 1", "", ".",
                                  "e3", "+nan", "0x1", "infin", "١", "1e", "0x1p"])
def test_go_float_rejects(text: str) -> None:
    """What Python's float accepts but Go's ParseFloat does not is rejected."""
    with pytest.raises(ValueError):
        parse_float(text)


@pytest.mark.parametrize(("value", "digits", "rounded"), [
    (2.5, 1, 3.0), (-2.5, 1, -3.0), (0.125, 2, 0.13), (1234.5678, 6, 1234.57),
    (1000.0, 1, 1000.0), (0.0, 3, 0.0), (123456.0, 2, 120000.0),
])
def test_significant_digits_half_away_from_zero(value: float, digits: int,
                                                 rounded: float) -> None:
    """Rounding is half away from zero, not Python's banker's rounding."""
    assert rounded == round_significant(value, digits)


def test_go_helpers() -> None:
    """Go's Round and integer Pow(10, n) agree with the exact values where representable."""
    assert (round_half_away(2.5), round_half_away(-2.5),
                                round_half_away(0.49999999999999994)) == (3.0, -3.0, 0.0)
    assert [10.0 ** k for k in range(-22, 23)] == [go_pow10(k) for k in range(-22, 23)]


@given(st.text(), st.text(), st.booleans(), st.none() | st.integers(-3, 30),
       st.none() | st.floats(allow_nan=False))
def test_never_raises(actual: str, expected: str, extract: bool, digits: int | None,
                      tolerance: float | None) -> None:
    """Arbitrary strings and configs give a result, never an exception."""
    config = {"extract_number": extract, "significant_digits": digits,
              "absolute_tolerance": tolerance}
    result = run_one("numeric_match", actual, expected, config)

    assert result.state in {"available", "error"}
