"""How AgentClash turns JSON values into text (docs/scoring.md §4.3 and §17).

Three Go behaviours are reproduced exactly:

* ``%v`` of a float64 — ``strconv.FormatFloat(f, 'g', -1, 64)``: shortest round-trip
  digits, exponent form when the decimal exponent is < -4 or >= 6, the exponent signed
  and at least two digits (``1e+06``, ``1.234567e+06``, ``1e-05``), never a trailing ``.0``;
* Go's JSON encoder for objects and arrays: sorted keys, compact, ``<``, ``>``, ``&``
  escaped as ``\\u003c`` …, numbers in plain decimal (``1000000`` stays ``1000000``);
* the "loose string" collapse: a string is itself; an object yields the first present of
  ``value``, ``content``, ``text``, ``answer`` (recursively); a one-element array its
  element; anything else is not a string.
"""

from __future__ import annotations

import json
import math
from decimal import Decimal
from typing import Any

from .textnorm import trim
from .yamlv3 import to_json

LOOSE_KEYS = ("value", "content", "text", "answer")
_HTML_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026"}


def go_number(value: float) -> str:
    """Format a number as Go's ``%v`` formats a float64."""
    f = float(value)
    if math.isnan(f):
        return "NaN"
    if math.isinf(f):
        return "+Inf" if f > 0 else "-Inf"
    if f == 0:
        return "-0" if math.copysign(1, f) < 0 else "0"
    sign, digits, exponent = Decimal(repr(f)).normalize().as_tuple()
    text = "".join(map(str, digits))
    decimal_exp = len(text) + int(exponent) - 1
    prefix = "-" if sign else ""
    if decimal_exp < -4 or decimal_exp >= 6:
        mantissa = text[0] + ("." + text[1:] if len(text) > 1 else "")
        return f"{prefix}{mantissa}e{'-' if decimal_exp < 0 else '+'}{abs(decimal_exp):02d}"
    return prefix + _plain(text, decimal_exp)


def _plain(digits: str, decimal_exp: int) -> str:
    point = decimal_exp + 1
    if point <= 0:
        return "0." + "0" * -point + digits
    if point >= len(digits):
        return digits + "0" * (point - len(digits))
    return digits[:point] + "." + digits[point:]


def go_json(value: Any) -> str:
    """Serialize like Go's ``json.Marshal`` of decoded JSON: sorted, compact, HTML-safe."""
    if isinstance(value, dict):
        items = (f"{_go_string(str(k))}:{go_json(value[k])}" for k in sorted(value))
        return "{" + ",".join(items) + "}"
    if isinstance(value, list | tuple):
        return "[" + ",".join(go_json(v) for v in value) + "]"
    if isinstance(value, str):
        return _go_string(value)
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    return _go_json_float(float(value))  # every JSON number decodes to a float64 in Go


def go_marshal(value: Any) -> str:
    """Go's ``json.Marshal`` of a value decoded from YAML or JSON into ``any``.

    Unlike :func:`go_json` (whose numbers are float64), integers are written exactly, as Go
    writes an ``int``/``uint64``; floats are written as Go writes a float64.

    Raises:
        yamlv3.MarshalError: NaN, ±Inf or a mapping with a non-string key.
    """
    return _marshal(to_json(value))


def _marshal(value: Any) -> str:
    if isinstance(value, dict):
        items = (f"{_go_string(str(k))}:{_marshal(value[k])}" for k in sorted(value))
        return "{" + ",".join(items) + "}"
    if isinstance(value, list):
        return "[" + ",".join(_marshal(v) for v in value) + "]"
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return go_json(value)


def _go_string(text: str) -> str:
    encoded = json.dumps(text, ensure_ascii=False)
    encoded = encoded.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    for raw, escaped in _HTML_ESCAPES.items():
        encoded = encoded.replace(raw, escaped)
    return encoded


def _go_json_float(f: float) -> str:
    """``encoding/json``'s float64: plain decimal in [1e-6, 1e21), else ``1e-7``, ``1e+22``."""
    if not math.isfinite(f):
        raise ValueError(f"unsupported value: {f}")
    if f == 0 or 1e-6 <= abs(f) < 1e21:
        sign, digits, exponent = Decimal(repr(f)).normalize().as_tuple()
        text = "".join(map(str, digits))
        return ("-" if sign else "") + _plain(text, len(text) + int(exponent) - 1)
    text = go_number(f)
    return text[:-2] + text[-1] if text[-4:-1] == "e-0" else text


def loose_string(value: Any) -> str | None:
    """The loose-string collapse, or None when the value is not string-like."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):  # the first of the keys whose value collapses
        found = (loose_string(value[key]) for key in LOOSE_KEYS if key in value)
        return next((text for text in found if text is not None), None)
    if isinstance(value, list) and len(value) == 1:
        return loose_string(value[0])
    return None


def stringify(value: Any) -> str:
    """Text of a resolved JSON value, by AgentClash's four rules (§4.3)."""
    loose = loose_string(value)
    if loose is not None:
        return loose
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, int | float):
        return go_number(value)
    return go_json(value)


def canonical_json(value: Any) -> str:
    """Sorted-key compact JSON, as AgentClash re-serializes tool-call arguments."""
    return go_json(value)


def first_non_empty(*values: str) -> str:
    """Go's ``firstNonEmpty``: the first value that is not blank after trimming, else ``""``."""
    return next((v for v in values if trim(v)), "")
