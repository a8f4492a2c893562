"""directory_structure: required/forbidden paths in a directory listing (docs/scoring.md §5.18).

Config (lenient, required at run time): ``{required_files, forbidden_files,
required_directories}``. The actual is the listing JSON (``{key, path, entries: [{path,
size, is_dir?}]}``). Every entry is indexed by its path as listed and by its path relative
to the listing root (Go ``filepath.Rel``, which cleans ``.`` and trailing slashes; when Rel
fails, the listed path again). Paths match exactly: no globs, and directories are **not**
inferred from file paths (``src/main.py`` does not make ``src/`` present). A required
directory, with one trailing ``/`` stripped, is present when it names an entry flagged
``is_dir`` or any indexed entry. The production capture never sets ``is_dir``.
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
    cut: bool = False
    """The listing stopped at its entry cap (evalfleet's ``truncated``; AgentClash's
    listings have no cap and no such field)."""

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
    index = Index(cut=isinstance(raw, dict) and raw.get("truncated") is True)
    for entry in entries or []:
        fields = _decoded(entry, "DirectoryEntry", _ENTRY)
        index.add(listing["path"], fields["path"], fields["is_dir"])
    return index


def _decoded(raw: Any, struct: str, fields: lenient.Fields) -> dict[str, Any]:
    decoded = lenient.decode(raw, struct, fields)
    if decoded.error is not None:
        raise ListingError(decoded.error)
    return decoded.values


def _reasons(missing: Sequence[str], forbidden: Sequence[str], missing_dirs: Sequence[str]) -> str:
    parts = [f"{label}: {', '.join(paths)}" for label, paths in (
        ("missing required files", missing), ("forbidden files present", forbidden),
        ("missing required directories", missing_dirs)) if paths]
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
    unproven = [] if forbidden or not index.cut else config.values["forbidden_files"]
    reason = _reasons(missing, forbidden, missing_dirs) or (
        f"{CUT}: {', '.join(unproven)}" if unproven else "")
    return Outcome.check(not (missing or forbidden or missing_dirs or unproven), "", reason)


#: Why forbidden files fail a listing cut at its cap: what is past the cut is unknown, and
#: a submission could make enough entries to push them there (found by a red-team pass).
CUT = "forbidden files cannot be shown absent from a listing cut at its entry cap"


KIND = Kind("directory_structure", check, strictness="lenient", expected="ignored",
            needs_file_target=True)
