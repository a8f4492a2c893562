"""Go's ``encoding/json`` scanner: which texts are JSON, and Go's words when one is not.

A port of ``scanner.go``'s state machine (one state per function, byte by byte over the
UTF-8 text), so that a candidate's malformed JSON is reported with Go's exact error, e.g.
``invalid character 'o' in literal null (expecting 'u')``. Two framings use it:

* :func:`check` is ``json.Unmarshal``'s ``checkValid``: the whole text is one value;
  a truncated value is ``unexpected end of JSON input``;
* :func:`decoder_value` is ``json.Decoder.Decode``: skip leading space, read one value
  (``EOF`` for none, ``unexpected EOF`` for a truncated one), leave the rest; and
  :func:`decoder_more` is ``Decoder.More``: another value follows unless the next
  non-space byte is ``]`` or ``}`` or there is none.
"""

from __future__ import annotations

from collections.abc import Callable

from .goquote import quote

MAX_DEPTH = 10_000
_SPACE = b" \t\r\n"
_CONTINUE, _SKIP, _END, _ERROR = "continue", "skip", "end", "error"
_OBJECT_KEY, _OBJECT_VALUE, _ARRAY_VALUE = 0, 1, 2
_DIGITS = b"0123456789"
_HEX = b"0123456789abcdefABCDEF"
_LITERALS = {b"t": b"rue", b"f": b"alse", b"n": b"ull"}
_NAMES = {b"t": "true", b"f": "false", b"n": "null"}


class JSONSyntaxError(ValueError):
    """Go's ``SyntaxError`` (or ``EOF`` / ``unexpected EOF`` from a Decoder).

    ``offset`` is the byte offset of the failing byte in the text's UTF-8 (None at end).
    """

    def __init__(self, message: str | None, offset: int | None = None) -> None:
        super().__init__(message)
        self.offset = offset


def quote_char(byte: int) -> str:
    """Go's ``quoteChar``: the byte as a one-character Go literal (``'x'``, ``'\\n'``)."""
    if byte == ord("'"):
        return "'\\''"
    if byte == ord('"'):
        return "'\"'"
    return "'" + quote(chr(byte))[1:-1] + "'"


State = Callable[["Scanner", int], str]


class Scanner:
    """``encoding/json``'s scanner: feed bytes with :meth:`step`, finish with :meth:`eof`."""

    def __init__(self) -> None:
        self.state: State = _begin_value
        self.stack: list[int] = []
        self.error: str | None = None
        self.error_offset: int | None = None
        self.end_top = False
        self.bytes = 0

    def step(self, byte: int) -> str:
        self.bytes += 1
        return self.state(self, byte)

    def fail(self, byte: int, context: str) -> str:
        self.state = _error
        self.error = f"invalid character {quote_char(byte)} {context}"
        self.error_offset = self.bytes - 1
        return _ERROR

    def push(self, byte: int, parse: int, success: str) -> str:
        self.stack.append(parse)
        return success if len(self.stack) <= MAX_DEPTH else self.fail(byte, "exceeded max depth")

    def pop(self) -> None:
        self.stack.pop()
        if self.stack:
            self.state = _end_value
        else:
            self.state, self.end_top = _end_top, True

    def eof(self) -> str:
        if self.error is not None:
            return _ERROR
        if self.end_top:
            return _END
        self.step(ord(" "))
        if self.end_top:
            return _END
        if self.error is None:
            self.error = "unexpected end of JSON input"
        return _ERROR


def _error(s: Scanner, c: int) -> str:
    return _ERROR


def _space(c: int) -> bool:
    return c in _SPACE


def _begin_value_or_empty(s: Scanner, c: int) -> str:
    if _space(c):
        return _SKIP
    if c == ord("]"):
        return _end_value(s, c)
    return _begin_value(s, c)


def _begin_value(s: Scanner, c: int) -> str:
    if _space(c):
        return _SKIP
    char = bytes([c])
    if char == b"{":
        s.state = _begin_string_or_empty
        return s.push(c, _OBJECT_KEY, _CONTINUE)
    if char == b"[":
        s.state = _begin_value_or_empty
        return s.push(c, _ARRAY_VALUE, _CONTINUE)
    if char == b'"':
        s.state = _in_string
    elif char == b"-":
        s.state = _negative
    elif char == b"0":
        s.state = _zero
    elif char in _LITERALS:
        s.state = _literal(char, 0)
    elif char in b"123456789":
        s.state = _digits
    else:
        return s.fail(c, "looking for beginning of value")
    return _CONTINUE


def _begin_string_or_empty(s: Scanner, c: int) -> str:
    if _space(c):
        return _SKIP
    if c == ord("}"):
        s.stack[-1] = _OBJECT_VALUE
        return _end_value(s, c)
    return _begin_string(s, c)


def _begin_string(s: Scanner, c: int) -> str:
    if _space(c):
        return _SKIP
    if c == ord('"'):
        s.state = _in_string
        return _CONTINUE
    return s.fail(c, "looking for beginning of object key string")


def _end_value(s: Scanner, c: int) -> str:
    if not s.stack:
        s.state, s.end_top = _end_top, True
        return _end_top(s, c)
    if _space(c):
        s.state = _end_value
        return _SKIP
    parse = s.stack[-1]
    if parse == _OBJECT_KEY:
        if c == ord(":"):
            s.stack[-1], s.state = _OBJECT_VALUE, _begin_value
            return _CONTINUE
        return s.fail(c, "after object key")
    if parse == _OBJECT_VALUE:
        if c == ord(","):
            s.stack[-1], s.state = _OBJECT_KEY, _begin_string
            return _CONTINUE
        if c == ord("}"):
            s.pop()
            return _CONTINUE
        return s.fail(c, "after object key:value pair")
    if c == ord(","):
        s.state = _begin_value
        return _CONTINUE
    if c == ord("]"):
        s.pop()
        return _CONTINUE
    return s.fail(c, "after array element")


def _end_top(s: Scanner, c: int) -> str:
    if not _space(c):
        s.fail(c, "after top-level value")  # reported on the next call, as in Go
    return _END


def _in_string(s: Scanner, c: int) -> str:
    if c == ord('"'):
        s.state = _end_value
    elif c == ord("\\"):
        s.state = _in_string_escape
    elif c < 0x20:
        return s.fail(c, "in string literal")
    return _CONTINUE


def _in_string_escape(s: Scanner, c: int) -> str:
    if bytes([c]) in b'bfnrt\\/"':
        s.state = _in_string
        return _CONTINUE
    if c == ord("u"):
        s.state = _hex_escape(4)
        return _CONTINUE
    return s.fail(c, "in string escape code")


def _hex_escape(remaining: int) -> State:
    def state(s: Scanner, c: int) -> str:
        if c not in _HEX:
            return s.fail(c, "in \\u hexadecimal character escape")
        s.state = _in_string if remaining == 1 else _hex_escape(remaining - 1)
        return _CONTINUE

    return state


def _negative(s: Scanner, c: int) -> str:
    if c == ord("0"):
        s.state = _zero
        return _CONTINUE
    if bytes([c]) in b"123456789":
        s.state = _digits
        return _CONTINUE
    return s.fail(c, "in numeric literal")


def _digits(s: Scanner, c: int) -> str:
    if c in _DIGITS:
        return _CONTINUE
    return _zero(s, c)


def _zero(s: Scanner, c: int) -> str:
    if c == ord("."):
        s.state = _dot
        return _CONTINUE
    if c in b"eE":
        s.state = _exponent
        return _CONTINUE
    return _end_value(s, c)


def _dot(s: Scanner, c: int) -> str:
    if c in _DIGITS:
        s.state = _fraction
        return _CONTINUE
    return s.fail(c, "after decimal point in numeric literal")


def _fraction(s: Scanner, c: int) -> str:
    if c in _DIGITS:
        return _CONTINUE
    if c in b"eE":
        s.state = _exponent
        return _CONTINUE
    return _end_value(s, c)


def _exponent(s: Scanner, c: int) -> str:
    if c in b"+-":
        s.state = _exponent_sign
        return _CONTINUE
    return _exponent_sign(s, c)


def _exponent_sign(s: Scanner, c: int) -> str:
    if c in _DIGITS:
        s.state = _exponent_digits
        return _CONTINUE
    return s.fail(c, "in exponent of numeric literal")


def _exponent_digits(s: Scanner, c: int) -> str:
    if c in _DIGITS:
        return _CONTINUE
    return _end_value(s, c)


def _literal(first: bytes, position: int) -> State:
    rest = _LITERALS[first]

    def state(s: Scanner, c: int) -> str:
        expected = rest[position]
        if c != expected:
            return s.fail(c, f"in literal {_NAMES[first]} (expecting '{chr(expected)}')")
        s.state = _end_value if position + 1 == len(rest) else _literal(first, position + 1)
        return _CONTINUE

    return state


def check(text: str) -> None:
    """``json.Unmarshal``'s validity check of the whole text.

    Raises:
        JSONSyntaxError: with Go's message.
    """
    scanner = Scanner()
    for byte in text.encode("utf-8", "surrogatepass"):
        if scanner.step(byte) == _ERROR:
            raise JSONSyntaxError(scanner.error, scanner.error_offset)
    if scanner.eof() == _ERROR:
        raise JSONSyntaxError(scanner.error, scanner.error_offset)


def valid(text: str) -> bool:
    """Go's ``json.Valid``."""
    try:
        check(text)
    except JSONSyntaxError:
        return False
    return True


def decoder_value(text: str) -> tuple[str, str]:
    """The first JSON value ``json.Decoder.Decode`` reads from ``text``, and the rest.

    Raises:
        JSONSyntaxError: ``EOF`` (nothing but space), ``unexpected EOF`` (a truncated
            value) or Go's syntax error.
    """
    data = text.encode("utf-8", "surrogatepass")
    scanner = Scanner()
    for index, byte in enumerate(data):
        result = scanner.step(byte)
        if result == _END or (scanner.end_top and result != _ERROR and not scanner.stack):
            end = index if result == _END else index + 1
            return _decoded(data[:end]), _decoded(data[end:])
        if result == _ERROR:
            raise JSONSyntaxError(scanner.error)
    if scanner.step(ord(" ")) == _END:
        return text, ""
    raise JSONSyntaxError("unexpected EOF" if data.strip(_SPACE) else "EOF")


def decoder_more(rest: str) -> bool:
    """``json.Decoder.More`` after a value: is another value next?"""
    stripped = rest.lstrip(" \t\r\n")
    return bool(stripped) and stripped[0] not in "]}"


def _decoded(data: bytes) -> str:
    return data.decode("utf-8", "surrogatepass")
