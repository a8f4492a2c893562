"""What one seeding can hold, checked on the host (``sandbox/seed_limits.py``): the
kernel's name and path limits, no path both a file and a directory, the profile's
``seed_files``, ``seed_bytes`` and ``fsize_bytes``."""

from __future__ import annotations

import pytest

from evalfleet.sandbox.command import SeedFile
from evalfleet.sandbox.paths import PathRejected
from evalfleet.sandbox.profile import Limits
from evalfleet.sandbox.seed_limits import entries, shown, unholdable

WORKSPACE = "/workspace"
#: The longest relative name whose path in the workspace fits PATH_MAX with its NUL.
LONGEST = 4096 - len(WORKSPACE) - 2


def first(*files: SeedFile, **limits: int) -> str | None:
    """The reason :func:`unholdable` gives, or None."""
    found = unholdable(files, WORKSPACE, Limits(**limits))
    return None if found is None else str(found)


def deep(size: int) -> str:
    """A relative path of ``size`` bytes made of 200-byte names."""
    names, rest = divmod(size, 201)
    return "/".join(["d" * 200] * names + ["f" * max(rest, 1)])[:size]


def test_what_fits_is_held() -> None:
    files = [SeedFile("a/b.txt", "x"), SeedFile("./a/c", "y"), SeedFile("n" * 255, "z"),
             SeedFile(deep(LONGEST), "w"), SeedFile("a/b.txt", "again")]
    assert first(*files) is None


def test_a_name_over_255_bytes() -> None:
    """Bytes, not characters: 128 two-byte characters are 256 bytes."""
    assert first(SeedFile("ok/" + "n" * 256, "x")) == (
        f"`ok/{'n' * 256}` has a name of 256 bytes, and a name may have at most 255 "
        "(NAME_MAX)")
    assert "has a name of 256 bytes" in (first(SeedFile("é" * 128, "x")) or "")


def test_a_path_over_path_max() -> None:
    """The path as the sandbox holds it, ``/workspace/…`` and its NUL, past 4096 bytes."""
    path = deep(LONGEST + 1)
    reason = first(SeedFile("fine", "x"), SeedFile(path, "x")) or ""
    assert reason.startswith(f"`{path[:300]}… ({LONGEST + 1} bytes)` is a path of 4097 bytes")
    assert reason.endswith("and a path may have at most 4096 (PATH_MAX)")


@pytest.mark.parametrize(("files", "named", "why"), [
    (["a", "a/b"], "a/b", "lies below `a`, a file: that path would be both a file and a "
                          "directory"),
    (["a/b/c", "a/b"], "a/b", "would be both a file and a directory: `a/b/c` lies below it"),
    (["./a", "/workspace/a/b"], "/workspace/a/b", "lies below `./a`, a file"),
])
def test_a_path_both_a_file_and_a_directory(files: list[str], named: str, why: str) -> None:
    """Whichever comes first, the second is named, spelled as given, with the first."""
    reason = first(*(SeedFile(path, "x") for path in files)) or ""
    assert reason.startswith(f"`{named}` {why}"), reason


def test_more_entries_than_seed_files() -> None:
    """Files and the directories they imply, each once: the file that passes the cap."""
    files = [SeedFile("a/one", "1"), SeedFile("a/two", "2"), SeedFile("b/three", "3")]
    assert first(*files, seed_files=4) == (
        "`b/three` makes the files more than 4 entries (files and their directories), the "
        "profile's seed_files")
    assert first(*files, seed_files=5) is None
    assert entries(["a/one", "a/two", "b/three"]) == 5


def test_more_bytes_than_seed_bytes_or_fsize() -> None:
    assert first(SeedFile("a", b"x" * 60), SeedFile("b", b"x" * 41), seed_bytes=100) == (
        "`b` makes the files more than 100 bytes, the profile's seed_bytes")
    assert first(SeedFile("big", b"x" * 101), fsize_bytes=100) == (
        "`big` is 101 bytes, more than the 100 a file may have (fsize_bytes)")


def test_paths_against_the_rules_are_left_to_the_caller() -> None:
    with pytest.raises(PathRejected):
        first(SeedFile("../x", "x"))


def test_a_long_path_is_shown_cut() -> None:
    assert shown("p" * 300) == "p" * 300
    assert shown("é" * 301) == "é" * 300 + "… (602 bytes)"
