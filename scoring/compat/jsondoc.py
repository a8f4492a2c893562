"""One JSON document read the way Go's ``json.Decoder`` reads it (docs/scoring.md §5.5, §5.6).

AgentClash decodes a candidate's JSON with ``json.NewDecoder(...).Decode`` and then rejects
the text when ``decoder.More()`` reports another value. Two consequences are reproduced:

* leading and trailing JSON whitespace is allowed, and so is a trailing ``]`` or ``}``
  (``More`` only looks for the start of another element: ``{"a":1}}`` is accepted);
* anything else after the value (``{} x``, ``1 2``, ``123abc``) is an error.

Go rejects ``NaN``/``Infinity`` (Python's ``json`` accepts them); they are rejected here.

With ``exact=True`` numbers are kept as :class:`Number`, their literal text, like Go's
``decoder.UseNumber()``: json_path_match compares and prints numbers from that text.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from .gojsonscan import JSONSyntaxError, decoder_more, decoder_value
from .textform import go_json


class DocumentError(ValueError):
    """The text is not exactly one JSON value."""


@dataclass(frozen=True)
class Number:
    """A JSON number kept as its literal text (Go's ``json.Number``)."""

    text: str

    def as_float(self) -> float | None:
        """The float64 value, or None when it overflows (Go's ``Number.Float64`` error)."""
        value = float(self.text)
        return None if value in (float("inf"), float("-inf")) else value


def _reject_constant(name: str) -> Any:
    raise DocumentError(f"invalid character {name[0]!r} looking for beginning of value")


def _int_or_float(text: str) -> int | float:
    try:
        return int(text)
    except ValueError:  # beyond Python's int-conversion digit limit: Go reads a float64
        return _float64(text)


def _float64(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise DocumentError(f"json: cannot unmarshal number {text} into Go value of type float64")
    return value


_PLAIN = json.JSONDecoder(parse_constant=_reject_constant, parse_int=_int_or_float,
                          parse_float=_float64)
_EXACT = json.JSONDecoder(parse_constant=_reject_constant, parse_float=Number, parse_int=Number)


def parse_document(text: str, *, exact: bool = False) -> Any:
    """Decode exactly one JSON value from ``text``, as a ``json.Decoder`` then ``More``.

    Raises:
        DocumentError: Go's message when the text is empty (``EOF``), truncated
            (``unexpected EOF``), malformed, or followed by another value.
    """
    try:
        value_text, rest = decoder_value(text)
    except JSONSyntaxError as err:
        raise DocumentError(str(err)) from None
    if decoder_more(rest):
        raise DocumentError("multiple JSON values are not allowed")
    decoder = _EXACT if exact else _PLAIN
    try:
        return decoder.decode(value_text)
    except (ValueError, RecursionError) as err:
        raise DocumentError(str(err)) from None


def to_exact(value: Any) -> Any:
    """An already-decoded JSON value with its numbers as :class:`Number` (config values).

    Numbers get Go's JSON spelling, as a YAML pack's values do in AgentClash (YAML → map →
    JSON): ``3.0`` becomes ``3``, an integer literal.
    """
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int | float):
        return Number(_number_text(value))
    if isinstance(value, list):
        return [to_exact(item) for item in value]
    if isinstance(value, dict):
        return {str(key): to_exact(item) for key, item in value.items()}
    return value


def _number_text(value: float) -> str:
    try:
        return go_json(value)
    except ValueError:  # NaN/Inf: not JSON at all; keep Python's spelling
        return json.dumps(value)


def to_plain(value: Any) -> Any:
    """An exact value with its numbers as int/float again (for recorded evidence)."""
    if isinstance(value, Number):
        if not any(c in value.text for c in ".eE") and len(value.text) < 4000:
            return int(value.text)
        return float(value.text)
    if isinstance(value, list):
        return [to_plain(item) for item in value]
    if isinstance(value, dict):
        return {key: to_plain(item) for key, item in value.items()}
    return value
