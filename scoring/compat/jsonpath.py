"""AgentClash's JSONPath subset (docs/scoring.md §5.6).

A path starts with ``$`` and continues with steps:

* ``.name`` where name is one or more of ``[A-Za-z0-9_-]``;
* ``[N]``, an integer index (Go ``strconv.Atoi``: ASCII digits with an optional sign);
* ``["key"]`` / ``['k']``, a Go string literal (a single-quoted key longer than one
  character is an error, "invalid quoted property"); a backquoted key is a bare name;
* ``[bare]``, anything else between the brackets, used as a property name.

The bracket content ends at the first ``]`` and is trimmed. There are no wildcards,
filters, slices or recursive descent. A step that does not apply (negative or out-of-range
index, wrong container, missing key) means the value "does not exist", which is not an
error; malformed syntax is — up to the first missing step, as in AgentClash (the rest of
the path is not read: ``$.missing.`` is "does not exist", ``$.`` is an error).
"""

from __future__ import annotations

from typing import Any

from .gojsonscan import quote_char
from .goquote import QuoteError, quote, unquote
from .textnorm import trim

_NAME_CHARS = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")
_INT64 = 1 << 63
_MISSING = object()


class PathError(ValueError):
    """The path is not valid syntax in the supported subset."""


def lookup(document: Any, path: str) -> tuple[bool, Any]:
    """Resolve ``path`` in ``document``; returns ``(exists, value)``.

    The path is read as Go reads a string: byte by byte, positions are byte offsets.

    Raises:
        PathError: when the path is malformed.
    """
    raw = trim(path).encode("utf-8", "surrogatepass")
    if not raw:
        raise PathError("path is empty")
    if raw[0] != ord("$"):
        raise PathError("path must start with '$'")
    current, index = document, 1
    while index < len(raw):
        step, index = _next_step(raw, index)
        current = _apply(current, step)
        if current is _MISSING:
            return False, None
    return True, current


def _next_step(path: bytes, index: int) -> tuple[str | int, int]:
    if path[index] == ord("."):
        end = index + 1
        while end < len(path) and path[end] in _NAME_CHARS:
            end += 1
        if end == index + 1:
            raise PathError(f"missing property name at position {index + 1}")
        return path[index + 1:end].decode("ascii"), end
    if path[index] == ord("["):
        return _bracket(path, index)
    raise PathError(f"unexpected token {quote_char(path[index])} at position {index}")


def _bracket(path: bytes, start: int) -> tuple[str | int, int]:
    close = path.find(b"]", start + 1)
    if close < 0:
        raise PathError(f"unterminated bracket expression at position {start}")
    content = trim(path[start + 1:close].decode("utf-8", "surrogatepass"))
    if not content:
        raise PathError(f"empty bracket expression at position {start}")
    if content[0] in "\"'":
        try:
            return unquote(content), close + 1
        except QuoteError as err:
            raise PathError(f"invalid quoted property {quote(content)}: {err}") from None
    number = go_atoi(content)
    return (content if number is None else number), close + 1


def go_atoi(text: str) -> int | None:
    """Go ``strconv.Atoi``: an optional sign and ASCII digits, within int64."""
    digits = text[1:] if text[:1] in ("+", "-") else text
    if not digits or not digits.isascii() or not digits.isdigit():
        return None
    value = int(text)
    return value if -_INT64 <= value < _INT64 else None


def _apply(current: Any, step: str | int) -> Any:
    if isinstance(step, int):
        if isinstance(current, list) and 0 <= step < len(current):
            return current[step]
        return _MISSING
    if isinstance(current, dict) and step in current:
        return current[step]
    return _MISSING
