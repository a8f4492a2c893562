"""yaml.v3's scalar resolution (``resolve.go``): what tag and Go value a scalar's text is.

The tags, yaml.v3's hint table, Go's base-0 integer parse and the YAML 1.1 booleans a
typed bool field still accepts. :mod:`scoring.compat.yamlv3` composes and decodes with it.
"""

from __future__ import annotations

import math
import re
from typing import Any, NamedTuple

from . import gotime
from .gofloat import FloatSyntaxError, parse_float

STR, BOOL, INT, FLOAT, NULL, TIMESTAMP = "!!str", "!!bool", "!!int", "!!float", "!!null", \
    "!!timestamp"
MAP, SEQ, BINARY, MERGE = "!!map", "!!seq", "!!binary", "!!merge"
_RESOLVABLE = {"", STR, BOOL, INT, FLOAT, NULL, TIMESTAMP}
_SPECIAL = {
    **dict.fromkeys(("true", "True", "TRUE"), (BOOL, True)),
    **dict.fromkeys(("false", "False", "FALSE"), (BOOL, False)),
    **dict.fromkeys(("", "~", "null", "Null", "NULL"), (NULL, None)),
    **dict.fromkeys((".nan", ".NaN", ".NAN"), (FLOAT, math.nan)),
    **dict.fromkeys((".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"), (FLOAT, math.inf)),
    **dict.fromkeys(("-.inf", "-.Inf", "-.INF"), (FLOAT, -math.inf)),
}
_MAP_HINT = set("yYnNtTfFoO~")
_NUMBER_HINT = set("+-0123456789")
_YAML_STYLE_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")
_INT64 = (-(1 << 63), (1 << 63) - 1)
_UINT64_MAX = (1 << 64) - 1
_BOOL_COMPAT = {**dict.fromkeys(("y", "Y", "yes", "Yes", "YES", "on", "On", "ON"), True),
                **dict.fromkeys(("n", "N", "no", "No", "NO", "off", "Off", "OFF"), False)}
"""Strings a *typed* bool field still accepts (yaml.v3 ``decode.go``, YAML 1.1 compat)."""



class YAMLError(ValueError):
    """The text cannot be decoded as yaml.v3 would; ``line`` is 1-based when known."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.line = line


class Timestamp(NamedTuple):
    """A resolved ``!!timestamp``: Go's ``time.Time`` as ``json.Marshal`` writes it."""

    rfc3339: str




def resolve(tag: str, text: str) -> tuple[str, Any]:
    """yaml.v3's ``resolve(tag, in)``: the resolved short tag and Go value of a scalar.

    Raises:
        YAMLError: an explicit tag the text cannot be (``!!int abc``).
    """
    if tag not in _RESOLVABLE:
        return tag, text
    resolved = _resolve_plain(text, tag) if tag != STR else (STR, text)
    if tag in ("", resolved[0], STR):
        return resolved
    if tag == FLOAT and resolved[0] == INT:
        return FLOAT, float(resolved[1])
    raise YAMLError(f"cannot decode {resolved[0]} `{text}` as a {tag}")


def _resolve_plain(text: str, tag: str) -> tuple[str, Any]:
    """resolve.go's hint table: map lookup, then ``.`` floats, then numbers/timestamps."""
    hint = text[:1]
    if text in _SPECIAL:
        return _SPECIAL[text]
    if hint == ".":
        try:
            return FLOAT, parse_float(text)
        except FloatSyntaxError:
            return STR, text
    if hint in _NUMBER_HINT:
        return _resolve_number(text, tag)
    return STR, text


def _resolve_number(text: str, tag: str) -> tuple[str, Any]:
    stamp = gotime.parse_yaml_timestamp(text) if tag in ("", TIMESTAMP) else None
    if stamp is not None:
        return TIMESTAMP, Timestamp(stamp)
    plain = text.replace("_", "")
    number = go_parse_int(plain)
    if number is not None and number <= _UINT64_MAX:
        return INT, number
    if _YAML_STYLE_FLOAT.fullmatch(plain):
        try:
            return FLOAT, parse_float(plain)
        except FloatSyntaxError:
            pass
    return STR, text


def go_parse_int(text: str) -> int | None:
    """``strconv.ParseInt(text, 0, 64)``, else ``strconv.ParseUint(text, 0, 64)``, else None.

    Base prefixes ``0x``/``0o``/``0b`` (either case, digits required) and a leading ``0``
    (octal); a sign only for the signed parse. The caller has already removed underscores.
    """
    sign = text[:1] if text[:1] in "+-" else ""
    base, digits = _base_of(text[len(sign):])
    if not digits or any(c not in _DIGITS[base] for c in digits):
        return None
    if len(digits.lstrip("0")) > 64:  # past any 64-bit value in any base (and Python's limit)
        return None
    value = int(digits.lstrip("0") or "0", base) * (-1 if sign == "-" else 1)
    if _INT64[0] <= value <= _INT64[1]:
        return value
    return value if not sign and value <= _UINT64_MAX else None


_DIGITS = {2: "01", 8: "01234567", 10: "0123456789", 16: "0123456789abcdefABCDEF"}


def _base_of(body: str) -> tuple[int, str]:
    """Go's base-0 prefix rule (``len(s) >= 3`` for a letter prefix, else octal)."""
    prefix = body[:2].lower()
    if len(body) >= 3 and prefix in ("0x", "0o", "0b"):
        return {"0x": 16, "0o": 8, "0b": 2}[prefix], body[2:]
    if body[:1] == "0" and len(body) > 1:
        return 8, body[1:]
    return 10, body



def typed_bool(tag: str, value: Any) -> bool | None:
    """The value a typed Go bool field takes from a resolved scalar, or None (type error)."""
    if tag == BOOL:
        return bool(value)
    if isinstance(value, str):
        return _BOOL_COMPAT.get(value)
    return None

