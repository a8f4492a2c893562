"""Go's ``net/url`` for ``$id``/``$ref``: ``Parse`` errors and ``ResolveReference``."""

from __future__ import annotations

import pytest

from evalfleet.scoring.compat import gourl


@pytest.mark.parametrize(("raw", "message"), [
    (":x", 'parse ":x": missing protocol scheme'),
    ("a:b/c%z", None),
    ("a/b:c", None),
    ("b:c/d", None),
    ("./b:c", None),
    ("b:c", None),
    ("x y:z", 'parse "x y:z": first path segment in URL cannot contain colon'),
    ("/a%zz", 'parse "/a%zz": invalid URL escape "%zz"'),
    ("/a%4", 'parse "/a%4": invalid URL escape "%4"'),
    ("/a#%zz", 'parse "/a#%zz": invalid URL escape "%zz"'),
    ("/a\x01", 'parse "/a\\x01": net/url: invalid control character in URL'),
    ("http://h:x/", 'parse "http://h:x/": invalid port ":x" after host'),
    ("http://h h/", 'parse "http://h h/": invalid character " " in host name'),
])
def test_parse_errors(raw: str, message: str | None) -> None:
    """``url.Parse`` refuses what Go refuses, with Go's words (an opaque URI is not parsed
    further)."""
    if message is None:
        gourl.parse(raw)
        return
    with pytest.raises(gourl.URLError) as raised:
        gourl.parse(raw)
    assert message == str(raised.value)


@pytest.mark.parametrize(("base", "ref", "resolved"), [
    ("", "a.json", "/a.json"),
    ("", "#/x", "#/x"),
    ("", "#", ""),
    ("http://e.com/a/b.json", "c.json", "http://e.com/a/c.json"),
    ("http://e.com/a/b.json", "../c.json#f", "http://e.com/c.json#f"),
    ("http://e.com/a/b.json", "#f", "http://e.com/a/b.json#f"),
    ("http://e.com/a/b.json", "//o.com/x", "http://o.com/x"),
    ("http://e.com/a/b.json", "urn:x:y", "urn:x:y"),
    ("urn:x:y", "#f", "urn:x:y#f"),
])
def test_resolve_reference(base: str, ref: str, resolved: str) -> None:
    """RFC 3986 resolution as Go writes it (a relative path on an empty base is rooted)."""
    assert resolved == gourl.resolve_reference(base, ref)
