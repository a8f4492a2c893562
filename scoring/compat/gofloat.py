"""Go's float64 parsing and rounding, for numeric_match (docs/scoring.md §5.8, §17, §17).

* :func:`parse_float` accepts exactly what Go's ``strconv.ParseFloat(s, 64)`` accepts
  (per the semantics doc): an optional sign, decimal digits with an optional point and
  exponent (``+5``, ``.5``, ``5.``, ``1e3``), ``inf``/``infinity`` (any case, signed) and
  ``nan`` (any case, unsigned), hex floats with a mandatory ``p`` exponent
  (``0x1.8p1``), and ``_`` digit separators exactly where Go's literal syntax allows them
  (``1_000``, ``1e1_0``, ``0x_1p0``; not ``1__0``, ``_1``, ``1_``). It rejects what
  Python's ``float`` is lenient about: surrounding whitespace, non-ASCII digits, ``+nan``.
  A finite literal that overflows is a range error, as in Go.
* :func:`round_significant` is Go's ``math.Round(v*p)/p`` with ``p = math.Pow(10, n-d)``
  and ``d = floor(math.Log10(|v|)) + 1``, following Go's ``Log10`` (computed through
  ``Log2`` and ``Frexp``) and its integer ``Pow`` (repeated squaring on the mantissa,
  then ``Ldexp``) operation by operation, so the float64 intermediates are Go's. Rounding
  is half away from zero (not Python's banker's ``round``).
"""

from __future__ import annotations

import math
import re
from typing import Final

from .goquote import quote

# The mantissa's digits go either before or after the point, never to both sides at once
# (``[0-9]+\.?[0-9]*`` would try every split of a long run of digits: quadratic time on a
# candidate's answer of digits that is not a number).
_DECIMAL: Final = re.compile(
    r"[+-]?(?:[0-9_]+(?:\.[0-9_]*)?|\.[0-9_]+)(?:[eE][+-]?[0-9][0-9_]*)?")
_HEX: Final = re.compile(
    r"[+-]?0[xX](?:[0-9a-fA-F_]+(?:\.[0-9a-fA-F_]*)?|\.[0-9a-fA-F_]+)[pP][+-]?[0-9][0-9_]*")
_SPECIAL: Final = re.compile(r"[+-]?(?:inf|infinity)|nan", re.IGNORECASE)
_LOG10_2: Final = 0.301029995663981195213738894724493026768189881462108541310
_INV_LN2: Final = 1.44269504088896340735992468100189213742664595415298593413


class FloatSyntaxError(ValueError):
    """Go's ``strconv.ParseFloat`` error text: ``parsing "x": invalid syntax``."""


def parse_float(text: str) -> float:
    """Parse ``text`` as Go's ``strconv.ParseFloat(text, 64)`` does.

    Raises:
        FloatSyntaxError: for a malformed literal or a finite literal out of range.
    """
    if _SPECIAL.fullmatch(text):
        return float(text)
    if "_" in text and not underscore_ok(text):
        raise FloatSyntaxError(f"strconv.ParseFloat: parsing {quote(text)}: invalid syntax")
    if _DECIMAL.fullmatch(text):
        value = float(text.replace("_", ""))
    elif _HEX.fullmatch(text):
        value = _parse_hex(text.replace("_", ""))
    else:
        raise FloatSyntaxError(f"strconv.ParseFloat: parsing {quote(text)}: invalid syntax")
    if math.isinf(value):
        raise FloatSyntaxError(f"strconv.ParseFloat: parsing {quote(text)}: value out of range")
    return value


def underscore_ok(text: str) -> bool:
    """Go's ``strconv.underscoreOK``: ``_`` only between digits, or after a base prefix."""
    body = text[1:] if text[:1] in "+-" else text
    saw, index, hex_digits = "^", 0, False
    if len(body) >= 2 and body[0] == "0" and body[1].lower() in "box":
        saw, index, hex_digits = "0", 2, body[1].lower() == "x"
    for char in body[index:]:
        if char.isascii() and (char.isdigit() or (hex_digits and char.lower() in "abcdef")):
            saw = "0"
        elif char == "_":
            if saw != "0":
                return False
            saw = "_"
        elif saw == "_":
            return False
        else:
            saw = "!"
    return saw != "_"


def _parse_hex(text: str) -> float:
    try:
        return float.fromhex(text)
    except OverflowError:
        return math.inf


def round_half_away(value: float) -> float:
    """Go's ``math.Round``: nearest integer, halves away from zero."""
    if not math.isfinite(value):
        return value
    whole = float(math.trunc(value))
    if abs(value - whole) >= 0.5:
        whole += math.copysign(1.0, value)
    return whole


def round_significant(value: float, digits: int) -> float:
    """Round ``value`` to ``digits`` significant digits exactly as AgentClash's Go code."""
    if value == 0:
        return 0.0
    if not math.isfinite(value):
        return math.nan
    magnitude = math.floor(go_log10(abs(value))) + 1
    power = go_pow10(digits - magnitude)
    if math.isinf(power) or power == 0:
        return math.nan
    return round_half_away(value * power) / power


def go_log10(value: float) -> float:
    """Go's ``math.Log10`` for a positive finite value: ``Log2(x) * (Ln2/Ln10)``."""
    fraction, exponent = math.frexp(value)
    if fraction == 0.5:
        return float(exponent - 1) * _LOG10_2
    return (math.log(fraction) * _INV_LN2 + exponent) * _LOG10_2


def go_pow10(exponent: int) -> float:
    """Go's ``math.Pow(10, exponent)`` for an integral exponent (repeated squaring)."""
    if exponent == 0:
        return 1.0
    if abs(exponent) >= 1 << 63:
        return math.inf if exponent > 0 else 0.0
    mantissa, binary_exp = 1.0, 0
    base, base_exp = math.frexp(10.0)
    remaining = abs(exponent)
    while remaining:
        if base_exp < -(1 << 12) or base_exp > 1 << 12:
            binary_exp += base_exp
            break
        if remaining & 1:
            mantissa *= base
            binary_exp += base_exp
        base *= base
        base_exp <<= 1
        if base < 0.5:
            base += base
            base_exp -= 1
        remaining >>= 1
    if exponent < 0:
        mantissa, binary_exp = 1 / mantissa, -binary_exp
    return _ldexp(mantissa, binary_exp)


def _ldexp(mantissa: float, exponent: int) -> float:
    try:
        return math.ldexp(mantissa, exponent)
    except OverflowError:
        return math.copysign(math.inf, mantissa)
