"""math_equivalence's expression language: tokens, exact numbers and the parser (docs/scoring.md
§5.11).

* Numbers are exact rationals: ``12``, ``1.5``, ``.5``, ``5.``, ``2.5e-3`` (scientific
  notation is split on ``e``: ``1e`` and ``1e+`` are errors), and a trailing ``%`` divides
  by 100.
* Identifiers (a letter or ``_``, then letters, digits, ``_``) are symbols; ``sqrt(x)`` is
  the only function (``x^(1/2)``); any other ``name(`` is an error.
* Precedence ``+ -`` < ``* /`` < ``^`` (right-associative), but **unary minus binds tighter
  than ``^``**: ``-2^2`` is ``(-2)^2 = 4``. There is no implicit multiplication (``2x``
  is a parse error).
* ``a - b`` is ``a + (-1)*b`` (a number is negated in place); ``a / b`` is ``a * b^-1``
  (a non-zero number is inverted in place). The trees are binary, as AgentClash builds them.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Literal

Op = Literal["num", "sym", "add", "mul", "pow"]
MAX_DECIMAL_EXPONENT = 100_000
_GO_SPACE = frozenset("\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
                      "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")
_SINGLE = {"(": "(", "{": "(", ")": ")", "}": ")", "+": "op", "-": "op", "*": "op", "/": "op",
           "^": "op"}


class MathSyntaxError(ValueError):
    """The text is not an expression of the supported language."""


@dataclass(frozen=True)
class Expr:
    """One node: a number, a symbol, or add/mul/pow over children."""

    op: Op
    value: Fraction = Fraction(0)
    name: str = ""
    children: tuple[Expr, ...] = ()


def number(value: Fraction) -> Expr:
    return Expr("num", value=value)


@dataclass(frozen=True)
class Token:
    kind: str
    """``num``, ``ident``, ``op``, ``(``, ``)`` or ``eof``."""
    text: str = ""
    value: Fraction = Fraction(0)


def tokenize(text: str) -> list[Token]:
    """Split ``text`` into tokens (Unicode whitespace separates and is dropped).

    Raises:
        MathSyntaxError: on an unexpected character or a malformed number.
    """
    tokens, index = [], 0
    while index < len(text):
        char = text[index]
        if char in _GO_SPACE:
            index += 1
        elif char in _SINGLE:
            tokens.append(Token(_SINGLE[char], char))
            index += 1
        elif char.isdecimal() or char == ".":
            token, index = _number_token(text, index)
            tokens.append(token)
        elif char.isalpha() or char == "_":
            end = _ident_end(text, index + 1)
            tokens.append(Token("ident", text[index:end]))
            index = end
        else:
            raise MathSyntaxError(f"unexpected character {char!r}")
    return [*tokens, Token("eof")]


def _ident_end(text: str, index: int) -> int:
    while index < len(text) and (text[index].isalpha() or text[index].isdecimal()
                                 or text[index] == "_"):
        index += 1
    return index


def _number_token(text: str, start: int) -> tuple[Token, int]:
    end = _number_end(text, start)
    literal = text[start:end]
    value = parse_number(literal)
    if end < len(text) and text[end] == "%":
        value, end = value / 100, end + 1
    return Token("num", literal, value), end


def _number_end(text: str, index: int) -> int:
    seen_dot, seen_exp = text[index] == ".", False
    index += 1
    while index < len(text):
        char = text[index]
        if char.isdecimal():
            index += 1
        elif char == "." and not seen_dot and not seen_exp:
            seen_dot, index = True, index + 1
        elif char in "eE" and not seen_exp:
            seen_exp, index = True, index + 1
            if index < len(text) and text[index] in "+-":
                index += 1
        else:
            break
    return index


def parse_number(literal: str) -> Fraction:
    """An exact rational from a number literal (no sign; digits, ``.``, ``e``).

    Raises:
        MathSyntaxError: when the literal is not a valid number.
    """
    if "e" in literal or "E" in literal:
        return _scientific(literal)
    whole, _, fraction = literal.partition(".")
    if not (whole or fraction) or not literal.isascii():
        raise MathSyntaxError(f'invalid number "{literal}"')
    return _exact(whole + fraction, -len(fraction))


def _scientific(literal: str) -> Fraction:
    parts = [part for part in literal.replace("E", "e").split("e") if part]
    if len(parts) != 2:
        raise MathSyntaxError(f'invalid scientific notation "{literal}"')
    mantissa, exponent_text = parts
    exponent = _go_atoi(exponent_text)
    if exponent is None:
        raise MathSyntaxError(f'invalid exponent in "{literal}"')
    whole, _, fraction = mantissa.partition(".")
    digits = (whole + fraction).lstrip("0")
    if not digits:
        return Fraction(0)
    if not digits.isascii():
        raise MathSyntaxError(f'invalid mantissa in "{literal}"')
    scale = exponent - len(fraction)
    if abs(scale) > MAX_DECIMAL_EXPONENT:
        raise MathSyntaxError(f'exponent too large in "{literal}"')
    return _exact(digits, scale)


def _exact(digits: str, scale: int) -> Fraction:
    """``digits × 10^scale`` exactly (no int-conversion digit limit, no context rounding)."""
    return Fraction(Decimal((0, tuple(int(d) for d in digits or "0"), scale)))


def _go_atoi(text: str) -> int | None:
    digits = text[1:] if text[:1] in ("+", "-") else text
    if not digits or not digits.isascii() or not digits.isdigit():
        return None
    value = int(text)
    return value if -(1 << 63) <= value < (1 << 63) else None


def parse(text: str) -> Expr:
    """Parse a normalized expression.

    Raises:
        MathSyntaxError: when the text is not a complete expression.
    """
    parser = _Parser(tokenize(text))
    tree = parser.sum()
    if parser.peek().kind != "eof":
        raise MathSyntaxError(f'unexpected token "{parser.peek().text}"')
    return tree


def negate(expr: Expr) -> Expr:
    """``-expr``: a number negated in place, else ``(-1) * expr``."""
    if expr.op == "num":
        return number(-expr.value)
    return Expr("mul", children=(number(Fraction(-1)), expr))


def invert(expr: Expr) -> Expr:
    """``1/expr``: a non-zero number inverted in place, else ``expr ^ -1``."""
    if expr.op == "num" and expr.value != 0:
        return number(1 / expr.value)
    return Expr("pow", children=(expr, number(Fraction(-1))))


class _Parser:
    """Recursive descent over the token list."""

    def __init__(self, tokens: list[Token]) -> None:
        self.tokens, self.index = tokens, 0

    def peek(self) -> Token:
        return self.tokens[min(self.index, len(self.tokens) - 1)]

    def take(self) -> Token:
        token, self.index = self.peek(), self.index + 1
        return token

    def at_op(self, ops: str) -> bool:
        return self.peek().kind == "op" and self.peek().text in ops

    def sum(self) -> Expr:
        left = self.product()
        while self.at_op("+-"):
            sign = self.take().text
            right = self.product()
            left = Expr("add", children=(left, negate(right) if sign == "-" else right))
        return left

    def product(self) -> Expr:
        left = self.power()
        while self.at_op("*/"):
            sign = self.take().text
            right = self.power()
            left = Expr("mul", children=(left, invert(right) if sign == "/" else right))
        return left

    def power(self) -> Expr:
        base = self.unary()
        if not self.at_op("^"):
            return base
        self.take()
        return Expr("pow", children=(base, self.power()))

    def unary(self) -> Expr:
        if self.at_op("+"):
            self.take()
            return self.unary()
        if self.at_op("-"):
            self.take()
            return negate(self.unary())
        return self.primary()

    def primary(self) -> Expr:
        token = self.take()
        if token.kind == "num":
            return number(token.value)
        if token.kind == "ident" and self.peek().kind == "(":
            return self.call(token.text)
        if token.kind == "ident":
            return Expr("sym", name=token.text)
        if token.kind == "(":
            inner = self.sum()
            self.close("expected closing parenthesis")
            return inner
        raise MathSyntaxError(f'unexpected token "{token.text}"')

    def call(self, name: str) -> Expr:
        self.take()
        argument = self.sum()
        self.close(f"expected closing parenthesis after {name}")
        if name != "sqrt":
            raise MathSyntaxError(f'unsupported function "{name}"')
        return Expr("pow", children=(argument, number(Fraction(1, 2))))

    def close(self, message: str) -> None:
        if self.peek().kind != ")":
            raise MathSyntaxError(message)
        self.take()
