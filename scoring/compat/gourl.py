"""Go's ``net/url`` as jsonschema-go uses it for ``$id`` and ``$ref``: ``Parse`` and its
errors, ``ResolveReference`` and ``IsAbs``.

``url.Parse`` cuts the fragment at the first ``#`` and parses the rest: a control
character, a ``:`` first (``missing protocol scheme``), a colon in the first segment of a
relative path, a bad ``%`` escape, a bad port or host character, each is an error worded
``parse "<url>": <reason>``. ``ResolveReference`` follows RFC 3986 §5.2 as Go writes it
(``resolvePath``): a relative path against an empty base becomes rooted (``a.json`` →
``/a.json``). URIs are handled as text here, re-escaping aside.
"""

from __future__ import annotations

import string
from typing import NamedTuple

from .goquote import quote

_HEX = frozenset(string.hexdigits)
_HOST_OK = frozenset(string.ascii_letters + string.digits + "-_.~!$&'()*+,;=:[]<>\"")
_SCHEME_REST = frozenset(string.ascii_letters + string.digits + "+-.")


class URLError(ValueError):
    """``*url.Error`` from ``url.Parse`` (``str`` is Go's text)."""


class URL(NamedTuple):
    """The parts of a URI reference that resolution needs (``authority`` keeps ``//``)."""

    scheme: str
    authority: str | None
    path: str
    query: str | None
    fragment: str

    def text(self) -> str:
        """The reference written back (``URL.String``, re-escaping aside)."""
        out = f"{self.scheme}:" if self.scheme else ""
        out += f"//{self.authority}" if self.authority is not None else ""
        out += self.path + (f"?{self.query}" if self.query is not None else "")
        return out + (f"#{self.fragment}" if self.fragment else "")


def parse(raw: str) -> URL:
    """``url.Parse``.

    Raises:
        URLError: with Go's text.
    """
    body, _, fragment = raw.partition("#")
    try:
        parsed = _parse(body)
    except ValueError as err:
        raise URLError(f"parse {quote(body)}: {err}") from None
    try:
        _unescape(fragment)
    except ValueError as err:
        raise URLError(f"parse {quote(raw)}: {err}") from None
    return parsed._replace(fragment=fragment)


def _parse(raw: str) -> URL:
    if any(ord(c) < 0x20 or c == "\x7f" for c in raw):
        raise ValueError("net/url: invalid control character in URL")
    scheme, rest = _scheme(raw)
    rest, mark, query = rest.partition("?")
    if not rest.startswith("/"):
        if scheme:
            return URL(scheme.lower(), None, rest, query if mark else None, "")
        if ":" in rest.partition("/")[0]:
            raise ValueError("first path segment in URL cannot contain colon")
    authority = None
    if rest.startswith("//") and (scheme or not rest.startswith("///")):
        authority, slash, path = rest[2:].partition("/")
        rest = slash + path
        _check_authority(authority)
    _unescape(rest)
    return URL(scheme.lower(), authority, rest, query if mark else None, "")


def _scheme(raw: str) -> tuple[str, str]:
    for index, char in enumerate(raw):
        if char in string.ascii_letters:
            continue
        if char in _SCHEME_REST and index > 0:
            continue
        if char == ":":
            if index == 0:
                raise ValueError("missing protocol scheme")
            return raw[:index], raw[index + 1:]
        break
    return "", raw


def _check_authority(authority: str) -> None:
    userinfo, at, host = authority.rpartition("@")
    if at and any(c not in _HOST_OK and c not in "%@" for c in userinfo):
        raise ValueError("net/url: invalid userinfo")
    if not host.startswith("[") and ":" in host:
        port = host[host.rindex(":"):]
        if not port[1:].isdigit() and port != ":":
            raise ValueError(f"invalid port {quote(port)} after host")
    _unescape(host)
    bad = next((c for c in host if ord(c) < 0x80 and c not in _HOST_OK and c != "%"), None)
    if bad is not None:
        raise ValueError(f"invalid character {quote(bad)} in host name")


def _unescape(text: str) -> str:
    """``url.unescape``: ``%XX`` decoded; a bad escape is ``invalid URL escape "%zz"``."""
    out = bytearray()
    index = 0
    while index < len(text):
        if text[index] == "%":
            code = text[index + 1:index + 3]
            if len(code) < 2 or not set(code) <= _HEX:
                raise ValueError(f"invalid URL escape {quote(text[index:index + 3])}")
            out.append(int(code, 16))
            index += 3
            continue
        out += text[index].encode()
        index += 1
    return out.decode("utf-8", "replace")


def unescape_fragment(fragment: str) -> str:
    """A fragment as ``URL.Fragment`` holds it (escapes decoded)."""
    try:
        return _unescape(fragment)
    except ValueError:
        return fragment


def resolve_reference(base: str, ref: str) -> str:
    """``base.ResolveReference(ref)`` as text (both already parse)."""
    b, r = parse(base), parse(ref)
    if r.scheme or r.authority is not None:
        path = r.path if _opaque(r) else _resolve_path(r.path, "")
        return r._replace(scheme=r.scheme or b.scheme, path=path).text()
    query, fragment = r.query, r.fragment
    if not r.path and r.query is None:
        query = b.query
        fragment = r.fragment or b.fragment
    if not r.path and _opaque(b):
        return URL(b.scheme, None, b.path, query, fragment).text()
    return URL(b.scheme, b.authority, _resolve_path(b.path, r.path), query, fragment).text()


def _opaque(url: URL) -> bool:
    return bool(url.scheme) and url.authority is None and not url.path.startswith("/")


def _resolve_path(base: str, ref: str) -> str:
    """Go's ``resolvePath``: merge, then remove dot segments; the result is rooted."""
    if not ref:
        full = base
    elif not ref.startswith("/"):
        full = base[:base.rfind("/") + 1] + ref
    else:
        full = ref
    if not full:
        return ""
    out: list[str] = []
    parts = full.split("/")
    for part in parts[1:] if full.startswith("/") else parts:
        if part == ".":
            continue
        if part == "..":
            if out:
                out.pop()
            continue
        out.append(part)
    if parts[-1] in (".", ".."):
        out.append("")
    return "/" + "/".join(out)


def is_absolute(uri: str) -> bool:
    """``URL.IsAbs``: the URI has a scheme."""
    return bool(parse(uri).scheme)
