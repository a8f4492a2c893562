"""Go's ``json.Unmarshal`` into ``any``, where it differs from Python's ``json`` (docs/scoring.md
§5.16, §5.20).

AgentClash compares JSON values after decoding them into Go's ``any``:

* every number becomes a float64, so ``1`` and ``1.0`` are one value and a literal beyond
  float64 range (``1e400``) is a decode error, not infinity;
* booleans are never numbers (Python's ``True == 1`` must not leak into equality);
* ``NaN``/``Infinity`` are not JSON, and nothing may follow the one value (unlike
  :mod:`scoring.compat.jsondoc`, which reproduces ``json.Decoder``'s looser end-of-value rule).

Error texts follow Go's (``unexpected end of JSON input``, ``invalid character 'x' ...``).
"""

from __future__ import annotations

import json
import math
from typing import Any

from .gojsonscan import JSONSyntaxError, check

_SPACE = " \t\r\n"
_CONTEXT = {
    "Extra data": "after top-level value",
    "Expecting ':' delimiter": "after object key",
    "Expecting ',' delimiter": "after object key:value pair",
    "Expecting property name": "looking for beginning of object key string",
    "Invalid control character at": "in string literal",
    "Invalid \\escape": "in string escape code",
}


class UnmarshalError(ValueError):
    """The text is not exactly one JSON value (the message is Go's wording)."""

    def __init__(self, message: str, position: int | None = None) -> None:
        super().__init__(message)
        self.position = position


def _reject_constant(name: str) -> Any:
    raise UnmarshalError(f"invalid character '{name[0]}' looking for beginning of value")


def _float64(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise UnmarshalError(f"json: cannot unmarshal number {text} into Go value of type float64")
    return value


def _int_or_float(text: str) -> int | float:
    try:
        return int(text)
    except ValueError:  # beyond Python's int-conversion digit limit
        return _float64(text)


_FLOAT64 = json.JSONDecoder(parse_constant=_reject_constant, parse_int=_float64,
                            parse_float=_float64)
_LITERAL = json.JSONDecoder(parse_constant=_reject_constant, parse_int=_int_or_float,
                            parse_float=_float64)


def unmarshal(text: str, *, float64: bool = True) -> Any:
    """Decode exactly one JSON value, numbers as float64 (or ints kept when not ``float64``).

    Raises:
        UnmarshalError: when the text is empty, malformed, out of range or holds more.
    """
    return decode(text, _FLOAT64 if float64 else _LITERAL)


def decode(text: str, decoder: json.JSONDecoder) -> Any:
    """Check the whole text as Go's scanner does, then decode it with ``decoder``.

    Raises:
        UnmarshalError: Go's syntax error, a decoder's error in Go's words, or nesting
            past Python's stack.
    """
    try:
        check(text)
    except JSONSyntaxError as err:
        raise UnmarshalError(str(err), _position(text, err)) from None
    try:
        return decoder.decode(text)
    except json.JSONDecodeError as err:
        raise UnmarshalError(_message(err), err.pos) from None
    except RecursionError:
        raise UnmarshalError("exceeded max depth") from None


def _position(text: str, err: JSONSyntaxError) -> int | None:
    """The failing byte's offset as a character index into ``text`` (None at the end)."""
    if err.offset is None:
        return None
    return len(text.encode("utf-8", "surrogatepass")[:err.offset].decode("utf-8", "ignore"))


def _message(err: json.JSONDecodeError) -> str:
    rest = err.doc[err.pos:]
    if not rest.strip(_SPACE):
        return "unexpected end of JSON input"
    context = next((text for prefix, text in _CONTEXT.items() if err.msg.startswith(prefix)),
                   "looking for beginning of value")
    return f"invalid character {_quote_char(rest[0])} {context}"


def _quote_char(char: str) -> str:
    if char == "'":
        return "'\\''"
    if char == '"':
        return "'\"'"
    if char == "\\":
        return "'\\\\'"
    return repr(char) if not char.isprintable() else f"'{char}'"


def is_number(value: Any) -> bool:
    """Whether a decoded value is a JSON number (booleans are not)."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def as_float64(value: int | float) -> float:
    """A number as Go's float64 (huge integers become ±Inf rather than raising)."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf  # copysign would convert it, and raise


def equal(left: Any, right: Any) -> bool:
    """Go ``reflect.DeepEqual`` of two decoded values, numbers compared as float64."""
    if isinstance(left, dict):
        return (isinstance(right, dict) and left.keys() == right.keys()
                and all(equal(value, right[key]) for key, value in left.items()))
    if isinstance(left, list):
        return (isinstance(right, list) and len(left) == len(right)
                and all(equal(a, b) for a, b in zip(left, right, strict=True)))
    if is_number(left) and is_number(right):
        return as_float64(left) == as_float64(right)
    return type(left) is type(right) and bool(left == right)
