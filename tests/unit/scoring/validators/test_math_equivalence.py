"""math_equivalence (docs/scoring.md §5.11): LaTeX normalization, exact parser, shallow canonical
form."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from unit.scoring.helpers import run_one, spec_with

from evalfleet.scoring.compat.mathcanon import canonical, evaluate, key
from evalfleet.scoring.compat.mathexpr import MathSyntaxError, parse
from evalfleet.scoring.compat.mathnorm import normalize
from evalfleet.scoring.errors import FieldError
from evalfleet.scoring.spec.rules import validate_spec
from evalfleet.scoring.validators.math_equivalence import KIND, MathEquivalenceConfig


@pytest.mark.parametrize(("raw", "normalized"), [
    ("  $$ 42 $$ ", "42"),
    ("$$$x$$$", "x"),
    ("1,000,000", "1000000"),
    ("3 × 4 · 5 ÷ 6", "3 * 4 * 5 / 6"),
    ("−1 – 2", "-1 - 2"),
    ("\\left( 1 \\right)", "( 1 )"),
    ("2 \\cdot 3 \\times 4", "2 * 3 * 4"),
    ("1\\!\\;\\:2", "12"),
    ("1\\,000", "1\\000"),  # commas are deleted first, so "\\," keeps its backslash
    ("\\boxed{\\frac{1}{2}}", "(((1)/(2)))"),
    ("\\frac {a} {b}", "((a)/(b))"),
    ("\\sqrt{2}", "sqrt(2)"),
    ("\\sqrt[3]{8}", "(((8)^(1/(3))))"),
    ("\\sqrt[ ]{8}", "sqrt(8)"),
    ("√2+1", "sqrt(2)+1"),
    ("√ (2)", "sqrt (2)"),
    ("{1}\n+\r\n{2}", "(1) + (2)"),
    ("a\t\t b", "a b"),
])
def test_normalization(raw: str, normalized: str) -> None:
    """Each LaTeX-ish rewrite of the normalization list."""
    assert normalize(raw) == normalized


@pytest.mark.parametrize(("raw", "delimiter", "normalized"), [
    ("work... #### 12 #### 13", "####", "13"),
    ("no delimiter 7", "####", "no delimiter 7"),
    ("answer: 5", "answer:", "5"),
])
def test_answer_extraction(raw: str, delimiter: str, normalized: str) -> None:
    """The text after the last delimiter (the whole text when absent)."""
    assert normalize(raw, delimiter) == normalized


@pytest.mark.parametrize(("raw", "message"), [
    ("", "expression is empty"),
    ("$$", "expression is empty"),
    ("\\boxed 5", "\\\\boxed must be followed by braces"),
    ("\\frac{1}", "\\\\frac must have a denominator group"),
    ("\\frac 1", "\\\\frac must have a numerator group"),
    ("\\frac{1{2}", "unbalanced '{' '}' group"),
    ("\\sqrt 2", "\\\\sqrt must have a radicand group"),
    ("\\sqrt[3{8}", "unbalanced '\\[' '\\]' group"),
])
def test_malformed_latex(raw: str, message: str) -> None:
    """Empty results and malformed groups are errors."""
    with pytest.raises(MathSyntaxError, match=message):
        normalize(raw)


@pytest.mark.parametrize(("text", "canonical_key", "value"), [
    ("-2^2", "num:4", 4.0),
    ("-x^2", "pow(mul(num:-1,sym:x),num:2)", None),
    ("2^3^2", "num:512", 512.0),
    ("1/3", "num:1/3", 1 / 3),
    ("50%", "num:1/2", 0.5),
    ("2.5e-3", "num:1/400", 0.0025),
    (".5 + 5.", "num:11/2", 5.5),
    ("x+1+2", "add(num:1,num:2,sym:x)", None),
    ("1+2+x", "add(num:3,sym:x)", None),
    ("x*1+0", "sym:x", None),
    ("0*x", "num:0", None),
    ("x^0", "num:1", None),
    ("x^1", "sym:x", None),
    ("b+a", "add(sym:a,sym:b)", None),
    ("2^33", "pow(num:2,num:33)", 8589934592.0),
    ("2^-2", "num:1/4", 0.25),
    ("sqrt(4)", "pow(num:4,num:1/2)", 2.0),
    ("x_1 + αβ2", "add(sym:x_1,sym:αβ2)", None),
    ("1/0", "pow(num:0,num:-1)", float("inf")),
    (".e5", "num:0", 0.0),
])
def test_parse_canonicalize_evaluate(text: str, canonical_key: str, value: float | None) -> None:
    """Unary minus binds tighter than ^, ^ is right-associative, constants fold exactly."""
    tree = parse(text)

    assert key(canonical(tree)) == canonical_key
    if value is not None:
        assert evaluate(tree) == pytest.approx(value)


@pytest.mark.parametrize(("text", "message"), [
    ("2x", 'unexpected token "x"'),
    ("2(3)", 'unexpected token "\\("'),
    ("sin(x)", 'unsupported function "sin"'),
    ("(1", "expected closing parenthesis"),
    ("sqrt(1", "expected closing parenthesis after sqrt"),
    ("1e", "invalid scientific notation"),
    ("1e+", "invalid exponent"),
    ("1 +", 'unexpected token ""'),
    ("1 @ 2", "unexpected character"),
    (".", "invalid number"),
    ("٣", "invalid number"),
])
def test_parse_errors(text: str, message: str) -> None:
    """No implicit multiplication, only sqrt, well-formed numbers."""
    with pytest.raises(MathSyntaxError, match=message):
        parse(text)


CASES: list[tuple[str, str, Any, str, str]] = [
    ("1/2", "0.5", None, "pass", "symbolic"),
    ("\\frac{1}{2}", "2/4", None, "pass", "symbolic"),
    ("x+y", "y+x", None, "pass", "symbolic"),
    ("x*2", "2*x", None, "pass", "symbolic"),
    ("x+x", "2*x", None, "fail", ""),
    ("(x+1)^2", "x^2+2*x+1", None, "fail", ""),
    ("0.3333333", "1/3", None, "pass", "numeric_fallback"),
    ("sqrt(2)", "1.41421356", None, "pass", "numeric_fallback"),
    ("0.3333333", "1/3", {"numeric_fallback": False}, "fail", ""),
    ("0.33", "1/3", {"tolerance": 0.01}, "pass", "numeric_fallback"),
    ("0.33", "1/3", {"tolerance": 0.001}, "fail", "numeric_fallback"),
    ("1/2", "0.5", {"comparison_mode": "numeric"}, "pass", "numeric"),
    ("1/3", "1/3", {"comparison_mode": "numeric", "tolerance": 0}, "pass", "numeric"),
    ("Reasoning... #### $\\boxed{12}$", "12", {"extract_answer": True}, "pass", "symbolic"),
    ("a || 3", "3", {"extract_answer": True, "answer_delimiter": " || "}, "pass", "symbolic"),
    ("-2^2", "4", None, "pass", "symbolic"),
    ("1,000", "1000", None, "pass", "symbolic"),
    ("10%", "0.1", None, "pass", "symbolic"),
]


@pytest.mark.parametrize(("actual", "expected", "config", "verdict", "mode_used"), CASES)
def test_decision(actual: str, expected: str, config: Any, verdict: str, mode_used: str) -> None:
    """Symbolic keys first, then the numeric fallback within tolerance."""
    result = run_one("math_equivalence", actual, expected, config)

    assert (result.verdict, result.evidence.get("mode_used", "")) == (verdict, mode_used)
    assert result.normalized_score == (1.0 if verdict == "pass" else 0.0)


def test_symbols_cannot_be_rescued_numerically() -> None:
    """x+x vs 2*x: no numeric value, so a plain fail with the symbolic reason."""
    result = run_one("math_equivalence", "x+x", "2*x")

    assert result.reason == "symbolic forms are not equivalent"
    assert result.evidence["actual_numeric_error"] == 'symbol "x" is not numeric'


def test_numeric_failure_reason() -> None:
    """The fail reason prints both numbers with Go's %.10g."""
    result = run_one("math_equivalence", "0.5", "0.25", {"comparison_mode": "numeric"})

    assert result.reason == "numeric values differ by 0.25 which exceeds tolerance 1e-06"


@pytest.mark.parametrize(("actual", "expected", "config", "outcome_class", "reason"), [
    ("2x", "2*x", None, "evaluator_error", "evaluate math_equivalence expressions"),
    ("2x", "2*x", {"numeric_fallback": False}, "evaluator_error",
     "parse math_equivalence expressions"),
    ("x", "x+0.5", {"comparison_mode": "numeric"}, "evaluator_error",
     "evaluate math_equivalence expressions"),
    ("", "1", None, "evaluator_error", "normalize actual math expression: expression is empty"),
    # AgentClash classes only listed prefixes as the pack's; this one is an evaluator_error.
    ("1", "\\frac{1}", None, "evaluator_error", "normalize expected math expression"),
    ("1", "1", {"comparison_mode": "exact"}, "pack_error", "comparison_mode must be"),
    ("1", "1", {"tolerance": "big"}, "pack_error",
     "parse math_equivalence config: json: cannot unmarshal string into Go struct field "
     "mathEquivalenceConfig.tolerance of type float64"),
    ("1", "1", {"unknown": 1}, "pack_error", 'unknown field "unknown"'),
])
def test_errors(actual: str, expected: str, config: Any, outcome_class: str,
                reason: str) -> None:
    """Unparseable sides and bad configs are errors, exactly where AgentClash errs."""
    result = run_one("math_equivalence", actual, expected, config)

    assert (result.state, result.outcome_class) == ("error", outcome_class)
    assert reason in result.reason


@pytest.mark.parametrize(("config", "errors"), [
    ({}, []),
    ({"comparison_mode": " numeric "}, []),
    ({"comparison_mode": "fuzzy"},
     [FieldError("c.comparison_mode", 'must be "symbolic" or "numeric"')]),
    ({"tolerance": -0.1}, [FieldError("c.tolerance", "must be greater than or equal to 0")]),
    ({"tolerance": 0}, []),
])
def test_config_rules(config: dict[str, Any], errors: list[FieldError]) -> None:
    """Load-time rules: comparison_mode and a non-negative tolerance."""
    assert KIND.config_rules is not None
    assert KIND.config_rules(MathEquivalenceConfig.model_validate(config), "c") == errors


def test_load_time_messages_through_validation() -> None:
    """validate_spec reports the rule at the config field path."""
    spec = spec_with({"key": "m", "type": "math_equivalence", "target": "final_output",
                      "expected_from": "literal:1", "config": {"tolerance": -1}})

    assert FieldError("evaluation_spec.validators[0].config.tolerance",
                      "must be greater than or equal to 0") in validate_spec(spec)


@given(st.text(), st.text())
def test_never_raises(actual: str, expected: str) -> None:
    """Arbitrary strings give a result, never an exception."""
    assert run_one("math_equivalence", actual, expected).state in {"available", "error"}


@given(st.text(alphabet="0123456789.e%+-*/^()x√{}\\frac ", max_size=30))
def test_expression_like_text_never_raises(text: str) -> None:
    """Expression-shaped text too (numeric mode, extraction on)."""
    config = {"comparison_mode": "numeric", "extract_answer": True}
    assert run_one("math_equivalence", text, text, config).state in {"available", "error"}
