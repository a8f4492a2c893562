"""Go string-literal unquoting (``strconv.Unquote``), for json_path_match's ``["key"]``.

Accepted forms: ``"..."`` with Go escapes (``\\n``, ``\\x41``, ``\\101``, ``\\u00e9``,
``\\U0001F600``, ``\\"``), ``'c'`` holding exactly one (possibly escaped) character, and
raw ```...``` strings (no escapes, carriage returns dropped). Byte escapes (``\\xff``) that
do not form UTF-8 are kept as surrogate escapes, so they never equal a JSON key.
"""

from __future__ import annotations

_SIMPLE = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v",
           "\\": "\\"}
_HEX_WIDTH = {"x": 2, "u": 4, "U": 8}
_OCTAL = "01234567"
_HEX = "0123456789abcdefABCDEF"


class QuoteError(ValueError):
    """The text is not a valid Go string literal ("invalid syntax")."""

    def __init__(self) -> None:
        super().__init__("invalid syntax")


def unquote(literal: str) -> str:
    """The value of a Go string literal.

    Raises:
        QuoteError: when ``literal`` is not exactly one valid Go literal.
    """
    if len(literal) < 2 or literal[0] != literal[-1] or literal[0] not in "\"'`":
        raise QuoteError()
    quote, body = literal[0], literal[1:-1]
    if quote == "`":
        if "`" in body:
            raise QuoteError()
        return body.replace("\r", "")
    out = _unescape(body, quote)
    if quote == "'" and len(out) != 1:
        raise QuoteError()
    return out


def _unescape(body: str, quote: str) -> str:
    out, index = bytearray(), 0
    while index < len(body):
        char = body[index]
        if char in (quote, "\n"):
            raise QuoteError()
        if char != "\\":
            out += char.encode("utf-8", "surrogatepass")
            index += 1
            continue
        piece, index = _escape(body, index + 1, quote)
        out += piece
    return out.decode("utf-8", "surrogateescape")


def _escape(body: str, index: int, quote: str) -> tuple[bytes, int]:
    if index >= len(body):
        raise QuoteError()
    code = body[index]
    if code in _SIMPLE or code == quote:
        return _SIMPLE.get(code, code).encode(), index + 1
    if code in _HEX_WIDTH:
        return _hex_escape(body, index, code)
    if code in _OCTAL:
        digits = body[index:index + 3]
        if len(digits) < 3 or any(d not in _OCTAL for d in digits) or int(digits, 8) > 255:
            raise QuoteError()
        return bytes([int(digits, 8)]), index + 3
    raise QuoteError()


def _hex_escape(body: str, index: int, code: str) -> tuple[bytes, int]:
    width = _HEX_WIDTH[code]
    digits = body[index + 1:index + 1 + width]
    if len(digits) < width or any(d not in _HEX for d in digits):
        raise QuoteError()
    value = int(digits, 16)
    if code == "x":
        return bytes([value]), index + 1 + width
    if value > 0x10FFFF or 0xD800 <= value <= 0xDFFF:
        raise QuoteError()
    return chr(value).encode(), index + 1 + width


def quote(text: str) -> str:
    """Go's ``strconv.Quote`` (what ``%q`` and ``%#v`` print for a string).

    Printable characters (Unicode letters, marks, numbers, punctuation, symbols and the
    ASCII space) stay as they are; ``"`` and ``\\`` are escaped; other characters use
    ``\\a``-style, ``\\x``, ``\\u`` or ``\\U`` escapes; an undecodable byte kept as a
    surrogate escape prints as ``\\x``.
    """
    return '"' + "".join(_quote_char(char) for char in text) + '"'


_QUOTE_SIMPLE = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t",
                 "\v": "\\v", '"': '\\"', "\\": "\\\\"}


def _quote_char(char: str) -> str:
    if char in _QUOTE_SIMPLE:
        return _QUOTE_SIMPLE[char]
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:  # a raw byte (surrogateescape): Go prints \xNN
        return f"\\x{code - 0xDC00:02x}"
    if char == " " or char.isprintable():
        return char
    if code < 0x80:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"
