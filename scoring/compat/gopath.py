"""Go's ``path/filepath`` ``Clean`` and ``Rel`` on slash-separated (Unix) paths (docs/scoring.md
§5.18).

``posixpath`` is close but not the same: ``normpath`` keeps a leading ``//`` (Go's
``Clean`` reduces it to ``/``), and ``relpath`` consults the working directory to relate
an absolute path to a relative one, where Go's ``Rel`` refuses.
"""

from __future__ import annotations

import posixpath


class RelError(ValueError):
    """``targ`` cannot be made relative to ``base`` (Go's ``Rel`` error)."""


def clean(path: str) -> str:
    """The shortest equivalent path: Go ``filepath.Clean`` (``""`` → ``"."``)."""
    cleaned = posixpath.normpath(path) if path else "."
    return "/" + cleaned.lstrip("/") if cleaned.startswith("//") else cleaned


def _parts(path: str) -> list[str]:
    return [part for part in path.split("/") if part]


def rel(base: str, targ: str) -> str:
    """A relative path that joined to ``base`` names ``targ``: Go ``filepath.Rel``.

    Raises:
        RelError: when one path is absolute and the other is not, or the relative path
            would have to climb out of an unknown ``..`` in ``base``.
    """
    base_clean, targ_clean = clean(base), clean(targ)
    if base_clean == targ_clean:
        return "."
    if base_clean.startswith("/") != targ_clean.startswith("/"):
        raise RelError(f"Rel: can't make {targ} relative to {base}")
    # Go drops a base of "." but keeps a target of "." (so Rel("a", ".") is "../.").
    base_parts = _parts(base_clean) if base_clean != "." else []
    targ_parts = _parts(targ_clean)
    common = 0
    while (common < min(len(base_parts), len(targ_parts))
           and base_parts[common] == targ_parts[common]):
        common += 1
    up = base_parts[common:]
    if up and up[0] == "..":
        raise RelError(f"Rel: can't make {targ} relative to {base}")
    return "/".join([".."] * len(up) + targ_parts[common:])
