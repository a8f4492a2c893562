"""directory_structure: required/forbidden paths in a directory listing (docs/scoring.md §5.18).

Config (lenient, required at run time): ``{required_files, forbidden_files,
required_directories}``. The actual is the listing JSON (``{key, path, entries: [{path,
size, is_dir?}]}``). Every entry is indexed by its path as listed and by its path relative
to the listing root (Go ``filepath.Rel``, which cleans ``.`` and trailing slashes; when Rel
fails, the listed path again). Paths match exactly: no globs, and directories are **not**
inferred from file paths (``src/main.py`` does not make ``src/`` present). A required
directory, with one trailing ``/`` stripped, is present when it names an entry flagged
``is_dir`` or any indexed entry. The production capture never sets ``is_dir``.

evalfleet's rule for a listing that is not whole (its ``error``, ``dropped`` or
``truncated``; docs/scoring.md §5.18): ``forbidden_files`` fail unless one is seen anyway,
and what is missing is said to be missing *from* that listing; what is seen counts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..compat import gojson, gopath, lenient
from .base import CheckInput, Kind, Outcome

FIELDS: lenient.Fields = {"required_files": ("strings", []), "forbidden_files": ("strings", []),
                          "required_directories": ("strings", [])}
_LISTING: lenient.Fields = {"key": ("string", ""), "path": ("string", ""), "entries": ("raw", None)}
_ENTRY: lenient.Fields = {"path": ("string", ""), "size": ("int64", 0), "is_dir": ("bool", False)}


class ListingError(ValueError):
    """The actual text is not a directory listing."""


@dataclass
class Index:
    """The paths a listing makes present: every entry's, and those flagged as directories."""

    paths: set[str] = field(default_factory=set)
    directories: set[str] = field(default_factory=set)
    gap: str = ""
    """What keeps the listing from being whole, as a reason says it (``""``: nothing):
    evalfleet's ``error``, ``dropped`` or ``truncated`` (AgentClash's listings have no cap
    and no such fields)."""

    def add(self, root: str, path: str, is_dir: bool) -> None:
        try:
            relative = gopath.rel(root, path)
        except gopath.RelError:
            relative = path
        self.paths |= {relative, path}
        if is_dir:
            self.directories |= {relative, path}

    def has_directory(self, required: str) -> bool:
        trimmed = required.removesuffix("/")
        return trimmed in self.directories or required in self.directories or trimmed in self.paths


def parse_listing(text: str) -> Index:
    """Index the listing JSON ``text``.

    Raises:
        ListingError: with Go's wording, when the text does not decode as a listing.
    """
    try:
        raw = gojson.unmarshal(text, float64=False)
    except gojson.UnmarshalError as err:
        raise ListingError(str(err)) from None
    listing = _decoded(raw, "DirectoryListingResult", _LISTING)
    entries = listing["entries"]
    if entries is not None and not isinstance(entries, list):
        raise ListingError(f"json: cannot unmarshal {lenient.json_kind(entries)} into Go struct "
                           "field DirectoryListingResult.entries of type []scoring.DirectoryEntry")
    index = Index(gap=gap(raw if isinstance(raw, dict) else {}))
    for entry in entries or []:
        fields = _decoded(entry, "DirectoryEntry", _ENTRY)
        index.add(listing["path"], fields["path"], fields["is_dir"])
    return index


def _decoded(raw: Any, struct: str, fields: lenient.Fields) -> dict[str, Any]:
    decoded = lenient.decode(raw, struct, fields)
    if decoded.error is not None:
        raise ListingError(decoded.error)
    return decoded.values


def gap(listing: dict[str, Any]) -> str:
    """What keeps a listing (its JSON, decoded) from showing every entry, as a reason
    names it; ``""`` for a whole listing."""
    error, dropped = listing.get("error"), listing.get("dropped")
    if isinstance(error, str) and error:
        return f"a listing that failed ({error})"
    if isinstance(dropped, int) and not isinstance(dropped, bool) and dropped > 0:
        return (f"a listing that left out {dropped} entries (their lines were over "
                f"{MAX_LINE_KIB} KiB)")
    return "a listing cut at its entry cap" if listing.get("truncated") is True else ""


#: The longest listing line the worker keeps (``sandbox.docker.transfer.MAX_LINE``).
MAX_LINE_KIB = 8


def _reasons(index: Index, missing: Sequence[str], forbidden: Sequence[str],
             missing_dirs: Sequence[str], unproven: Sequence[str]) -> str:
    """Each finding; what was missing is said to be missing *from* the listing's gap."""
    where = f" from {index.gap}" if index.gap else ""
    parts = [f"{label}: {', '.join(paths)}" for label, paths in (
        (f"missing required files{where}", missing), ("forbidden files present", forbidden),
        (f"missing required directories{where}", missing_dirs),
        (f"{ABSENT} {index.gap}", unproven)) if paths]
    return "; ".join(parts)


def check(given: CheckInput) -> Outcome:
    if given.decl.config is None:
        return Outcome.error("directory_structure config is required")
    config = lenient.decode(given.decl.config, "directoryStructureConfig", FIELDS)
    if config.error is not None:
        return Outcome.error(f"invalid directory_structure config: {config.error}")
    try:
        index = parse_listing(given.actual or "")
    except ListingError as err:
        return Outcome.error(f"parse directory listing: {err}")
    missing = [path for path in config.values["required_files"] if path not in index.paths]
    forbidden = [path for path in config.values["forbidden_files"] if path in index.paths]
    missing_dirs = [path for path in config.values["required_directories"]
                    if not index.has_directory(path)]
    unproven = [] if forbidden or not index.gap else config.values["forbidden_files"]
    reason = _reasons(index, missing, forbidden, missing_dirs, unproven)
    return Outcome.check(not (missing or forbidden or missing_dirs or unproven), "", reason)


#: Why forbidden files fail a listing that is not whole: what it left out is unknown, and a
#: submission could push them there — past the entry cap (found by a red-team pass), into
#: lines over 8 KiB, or by making the listing fail (issue 38).
ABSENT = "forbidden files cannot be shown absent from"


KIND = Kind("directory_structure", check, strictness="lenient", expected="ignored",
            needs_file_target=True)
