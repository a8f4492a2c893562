"""RFC 8785 canonical JSON (the JSON Canonicalization Scheme), fast, and I-JSON.

What a result's signature covers (:mod:`tasks.signatures`): one text per JSON value,
whatever the member order or whitespace it was written with. Numbers are written as
ECMAScript writes them and object members ordered by their names' UTF-16 code units. The
json module's C encoder writes most values exactly so once integral floats are integers
(:func:`_normalized`); the rest is written here (:func:`_text`). A property test holds both
to the reference implementation, ``rfc8785`` (which raises the errors this module raises).

A value must be I-JSON (RFC 7493) to have a canonical form: :func:`portable` makes it so
(an integer beyond ±(2**53 − 1) becomes the nearest double, or text when it has none; text
that is not Unicode gets U+FFFD; NaN and infinities become null, as pydantic writes them).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

import rfc8785

#: The largest integer every JSON reader holds exactly (RFC 7493, §2.2).
SAFE_INTEGER = 2**53 - 1
_SURROGATE = re.compile("[\ud800-\udfff]")
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")
CanonicalizationError = rfc8785.CanonicalizationError


def canonical(value: Any) -> bytes:
    """RFC 8785 canonical JSON of ``value`` (I-JSON already: see :func:`portable`).

    Raises:
        rfc8785.CanonicalizationError: ``value`` is not I-JSON.
    """
    try:
        try:
            text = _encoded(_normalized(value))
            if not text.isascii() and _ASTRAL.search(text):  # such a name may sort otherwise
                raise _Unusual
        except _Unusual:
            text = _text(value)
        return text.encode("utf-8")
    except UnicodeEncodeError:
        raise rfc8785.CanonicalizationError("input contains non-UTF-8 codepoints") from None


class _Unusual(Exception):
    """A value the json module would not write as RFC 8785 does, even normalized."""


def _normalized(value: Any) -> Any:
    """A copy of ``value`` the json module's C encoder writes exactly as RFC 8785 does:
    integral floats as integers (``1.0`` is ``1`` in ECMAScript). The fast path; raises
    :class:`_Unusual` for what only :func:`_text` writes right (floats Python and
    ECMAScript place differently, integers past 2**53; :func:`canonical` sees to names
    beyond the BMP)."""
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return value
    if kind is float:
        if value.is_integer() and -SAFE_INTEGER <= value <= SAFE_INTEGER:
            return int(value)
        if 1e-4 <= abs(value) < 1e16 and not value.is_integer():
            return value  # Python's repr and ECMAScript's agree here
        raise _Unusual
    if kind is int:
        if -SAFE_INTEGER <= value <= SAFE_INTEGER:
            return value
        raise _Unusual
    if kind is dict:
        return {name: _normalized(item) for name, item in value.items()}
    if kind is list or kind is tuple:
        return [_normalized(item) for item in value]
    raise _Unusual


def _text(value: Any) -> str:
    """:func:`canonical` as text: the json module's C encoder for every container it writes
    as RFC 8785 does (:func:`_plain`), the rest here."""
    kind = type(value)
    if kind is str:
        return str(_STRING(value))
    if kind is float:
        return es6_number(value)
    if kind is int and not isinstance(value, bool):
        if -SAFE_INTEGER <= value <= SAFE_INTEGER:
            return str(value)
        raise rfc8785.IntegerDomainError(value)
    if value is None or kind is bool:
        return "null" if value is None else "true" if value else "false"
    if (kind is dict or kind is list) and _plain(value):
        return _encoded(value)
    if kind is dict:
        names = sorted(value, key=_utf16) if any(map(_ASTRAL.search, value)) else sorted(value)
        return "{" + ",".join(str(_STRING(n)) + ":" + _text(value[n]) for n in names) + "}"
    if kind is list or kind is tuple:
        return "[" + ",".join(map(_text, value)) + "]"
    raise rfc8785.CanonicalizationError(f"unsupported type: {kind.__name__}")


def _plain(value: Any) -> bool:
    """Whether ``value`` holds no integer past 2**53, no name beyond the Basic Multilingual
    Plane and no float but those Python writes as ECMAScript does: where the json
    module's text and RFC 8785's are the same (RFC 8785 writes numbers as ECMAScript does
    and orders names by UTF-16 code units)."""
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return True
    if kind is int:
        return bool(-SAFE_INTEGER <= value <= SAFE_INTEGER)
    if kind is float:  # Python's repr and ECMAScript's agree here, integral values apart
        return 1e-4 <= abs(value) < 1e16 and not value.is_integer()
    if kind is dict:
        return all(type(k) is str and not _ASTRAL.search(k) and _plain(v)
                   for k, v in value.items())
    if kind is list:
        return all(map(_plain, value))
    return False


def es6_number(number: float) -> str:
    """A double as ECMAScript's ``Number.prototype.toString`` writes it (RFC 8785 §3.2.2.3):
    the shortest digits that read back (Python's ``repr`` finds the same), placed as
    ECMAScript places them.

    Raises:
        rfc8785.FloatDomainError: NaN or an infinity.
    """
    if not math.isfinite(number):
        raise rfc8785.FloatDomainError(number)
    if number.is_integer() and abs(number) <= SAFE_INTEGER:
        return str(int(number))  # its shortest digits are all of them (-0.0 is "0")
    if 1e-4 <= abs(number) < 1e16 and not number.is_integer():
        return repr(number)  # the same digits in the same place
    sign, (digits, point) = "-" if number < 0 else "", _decimal(abs(number))
    count = len(digits)
    if count <= point <= 21:
        body = digits + "0" * (point - count)
    elif 0 < point <= 21:
        body = digits[:point] + "." + digits[point:]
    elif -6 < point <= 0:
        body = "0." + "0" * -point + digits
    else:
        mantissa = digits[0] + ("." + digits[1:] if count > 1 else "")
        body = f"{mantissa}e{'+' if point > 0 else '-'}{abs(point - 1)}"
    return sign + body


def _decimal(number: float) -> tuple[str, int]:
    """A positive ``number``'s shortest digits (no leading or trailing zeros) and where
    the decimal point goes: ``0.d1d2… × 10**point``."""
    mantissa, _, exponent = repr(number).partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = (whole + fraction).lstrip("0")
    point = len(whole) + int(exponent or 0) - (len(whole + fraction) - len(
        (whole + fraction).lstrip("0")))
    return digits.rstrip("0") or "0", point


def _utf16(name: str) -> bytes:
    return name.encode("utf-16-be", "surrogatepass")


_STRING: Any = json.encoder.encode_basestring
_ENCODER = json.JSONEncoder(ensure_ascii=False, sort_keys=True, separators=(",", ":"),
                            allow_nan=False)
#: The json module's C encoder, made once (``JSONEncoder.encode`` makes one per call).
_C_ENCODER: Any = json.encoder.c_make_encoder  # type: ignore[attr-defined]
_ONE = _C_ENCODER and _C_ENCODER(None, None, _STRING, None, ":", ",", True, False, False)


def _encoded(value: Any) -> str:
    return "".join(_ONE(value, 0)) if _ONE else _ENCODER.encode(value)


def portable(value: Any) -> Any:
    """``value`` made I-JSON: integers past ±(2**53 − 1) as doubles (as text when too big
    for one), text that is not Unicode with U+FFFD in place of what is not, NaN and
    infinities as null."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None  # as pydantic writes them
    if isinstance(value, int):
        return value if abs(value) <= SAFE_INTEGER else _big(value)
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, Mapping):
        return {portable(k): portable(v) for k, v in value.items()}
    return [portable(item) for item in value]


def _big(value: int) -> float | str:
    try:
        return float(value)
    except OverflowError:
        return str(value)


def members(document: Mapping[str, Any]) -> dict[str, tuple[Any, bytes]]:
    """Each member's value (made portable only when it has to be) and canonical text."""
    out: dict[str, tuple[Any, bytes]] = {}
    for name, value in document.items():
        try:
            out[name] = (value, canonical(value))
        except rfc8785.CanonicalizationError:  # not I-JSON: a big integer, a lone surrogate
            fixed = portable(value)
            out[name] = (fixed, canonical(fixed))
    return out


def joined(members: Mapping[str, bytes]) -> bytes:
    """The canonical text of an object whose members' canonical texts are ``members``
    (RFC 8785 §3.2.3: names ordered by their UTF-16 code units)."""
    names = sorted(members, key=_utf16)
    return b"{" + b",".join(_STRING(n).encode() + b":" + members[n] for n in names) + b"}"
