"""Canonical forms and float evaluation of math expressions (docs/scoring.md §5.11).

The canonical form is deliberately shallow, as AgentClash's is:

* ``+`` and ``*`` are flattened one level (a canonical child of the same operation gives up
  its children), the *direct* numeric children are folded exactly, ``+0`` and ``*1`` are
  dropped, a zero product is ``0``;
* ``x^0`` → 1, ``x^1`` → x, and a rational to an integer power is folded exactly when
  ``|exponent| ≤ 32`` and both parts of the base fit in 256 bits;
* operands are sorted by their canonical key.

Like terms are never combined and products never expanded: ``x+x`` ≠ ``2*x`` and
``(x+1)^2`` ≠ ``x^2+2*x+1``. Evaluation is float64 arithmetic over the *parsed* tree (a
symbol cannot be evaluated), with Go's ``math.Pow`` special cases.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction
from typing import Literal

from .mathexpr import Expr, number

MAX_EXACT_EXPONENT = 32
MAX_EXACT_OPERAND_BITS = 256
#: Integers of at most this many bits have at most 3,613 digits: ``str`` writes them.
_SAFE_BITS = 12_000


class NotNumeric(ValueError):
    """The expression has no numeric value (it contains a symbol)."""


def canonical(expr: Expr) -> Expr:
    """The canonical form of ``expr``."""
    if expr.op == "add" or expr.op == "mul":
        return _collect(expr.op, [canonical(child) for child in expr.children])
    if expr.op == "pow":
        return _power(canonical(expr.children[0]), canonical(expr.children[1]))
    return expr


def _collect(op: Literal["add", "mul"], children: list[Expr]) -> Expr:
    identity = Fraction(0 if op == "add" else 1)
    folded, operands = identity, list[Expr]()
    for child in children:
        if child.op == op:
            operands.extend(child.children)
        elif child.op == "num":
            folded = folded + child.value if op == "add" else folded * child.value
        else:
            operands.append(child)
    if op == "mul" and folded == 0:
        return number(Fraction(0))
    if folded != identity or not operands:
        operands.append(number(folded))
    operands.sort(key=key)
    return operands[0] if len(operands) == 1 else Expr(op, children=tuple(operands))


def _power(base: Expr, exponent: Expr) -> Expr:
    if exponent.op == "num":
        if exponent.value == 0:
            return number(Fraction(1))
        if exponent.value == 1:
            return base
        if base.op == "num" and exponent.value.denominator == 1:
            folded = exact_power(base.value, exponent.value.numerator)
            if folded is not None:
                return number(folded)
    return Expr("pow", children=(base, exponent))


def exact_power(base: Fraction, exponent: int) -> Fraction | None:
    """``base ** exponent`` exactly, or None when outside the folding limits.

    ``0`` to a negative power is not folded (AgentClash would divide by zero).
    """
    if abs(exponent) > MAX_EXACT_EXPONENT:
        return None
    if max(base.numerator.bit_length(), base.denominator.bit_length()) > MAX_EXACT_OPERAND_BITS:
        return None
    if base == 0 and exponent < 0:
        return None
    return base**exponent


def key(expr: Expr) -> str:
    """The canonical key: ``num:3/4``, ``sym:x``, ``add(...)``, ``mul(...)``, ``pow(b,e)``."""
    if expr.op == "num":
        return f"num:{fraction_text(expr.value)}"
    if expr.op == "sym":
        return f"sym:{expr.name}"
    return f"{expr.op}({','.join(key(child) for child in expr.children)})"


def fraction_text(value: Fraction) -> str:
    """``str(value)`` (Go's ``big.Rat.RatString``: ``3/4``, ``5``) at any size: Python
    refuses to write an integer of more than 4,300 digits, and an answer of ``1e5000``
    made scoring raise (the run void)."""
    if value.denominator == 1:
        return int_text(value.numerator)
    return f"{int_text(value.numerator)}/{int_text(value.denominator)}"


def int_text(number: int) -> str:
    """The decimal digits of ``number``, split in halves below Python's digit limit."""
    if number < 0:
        return "-" + int_text(-number)
    if number.bit_length() <= _SAFE_BITS:
        return str(number)
    digits = 1 << ((number.bit_length() * 3 // 10).bit_length() - 1)  # about half of them
    high, low = divmod(number, _power_of_ten(digits))
    return int_text(high) + int_text(low).rjust(digits, "0")


@functools.cache
def _power_of_ten(digits: int) -> int:
    power: int = 10**digits
    return power


def evaluate(expr: Expr) -> float:
    """The float64 value of a parsed expression.

    Raises:
        NotNumeric: when the expression contains a symbol.
    """
    if expr.op == "num":
        return to_float(expr.value)
    if expr.op == "sym":
        raise NotNumeric(f'symbol "{expr.name}" is not numeric')
    values = [evaluate(child) for child in expr.children]
    if expr.op == "pow":
        return go_pow(values[0], values[1])
    total = 0.0 if expr.op == "add" else 1.0
    for value in values:
        total = total + value if expr.op == "add" else total * value
    return total


def to_float(value: Fraction) -> float:
    """Nearest float64 (Go ``Rat.Float64``): ±Inf on overflow instead of an exception."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def go_pow(base: float, exponent: float) -> float:
    """Go's ``math.Pow``: Inf/NaN results where Python raises."""
    try:
        return math.pow(base, exponent)
    except ZeroDivisionError:
        return _zero_to_negative(base, exponent)
    except ValueError:
        if base == 0:
            return _zero_to_negative(base, exponent)
        return math.nan
    except OverflowError:
        negative = base < 0 and _odd_integer(exponent)
        return -math.inf if negative else math.inf


def _zero_to_negative(base: float, exponent: float) -> float:
    if _odd_integer(exponent):
        return math.copysign(math.inf, base)
    return math.inf


def _odd_integer(value: float) -> bool:
    return math.isfinite(value) and value.is_integer() and int(value) % 2 == 1
