"""Tar in and out: seed archives, and the whitelist applied to capture archives."""

from __future__ import annotations

import io
import subprocess
import tarfile
from typing import Any

import pytest

from evalfleet.sandbox.command import SeedFile
from evalfleet.sandbox.docker import transfer
from evalfleet.sandbox.errors import SandboxConfigError
from evalfleet.sandbox.results import Listing


def archive(*members: tuple[str, bytes, bytes]) -> bytes:
    """A tar of (name, type, data) members, as a hostile sandbox could produce."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name, kind, data in members:
            info = tarfile.TarInfo(name)
            info.type, info.size = kind, len(data) if kind == tarfile.REGTYPE else 0
            if kind in (tarfile.SYMTYPE, tarfile.LNKTYPE):
                info.linkname = "/etc/shadow"
            tar.addfile(info, io.BytesIO(data) if kind == tarfile.REGTYPE else None)
    return buffer.getvalue()


def test_seed_archive_has_parents_modes_and_relative_names() -> None:
    """Members are relative to the workspace, parents first, modes kept."""
    data = transfer.seed_archive([SeedFile("a/b/c.sh", "x", mode=0o755),
                                  SeedFile("/workspace/d", b"yy")], "/workspace", 100)
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        members = [(m.name, m.type, m.mode) for m in tar.getmembers()]
    assert members == [("a", tarfile.DIRTYPE, 0o755), ("a/b", tarfile.DIRTYPE, 0o755),
                       ("a/b/c.sh", tarfile.REGTYPE, 0o755), ("d", tarfile.REGTYPE, 0o644)]


def test_seed_records_list_what_the_archive_holds() -> None:
    """The supervisor's records (protocol 5): the archive's entries, in its order, each
    type, mode, size, name NUL, then the data."""
    records = transfer.seed_records([SeedFile("a/b/c.sh", "x", mode=0o755),
                                     SeedFile("/workspace/d", b"yy"),
                                     SeedFile("a/e", b"", mode=0o4777)], "/workspace", 100)
    assert records == (
        b"D" + _mode_size(0o755, 0) + b"a\0"
        + b"D" + _mode_size(0o755, 0) + b"a/b\0"
        + b"F" + _mode_size(0o755, 1) + b"a/b/c.sh\0x"
        + b"F" + _mode_size(0o644, 2) + b"d\0yy"
        + b"F" + _mode_size(0o777, 0) + b"a/e\0")


def _mode_size(mode: int, size: int) -> bytes:
    return mode.to_bytes(4, "big") + size.to_bytes(4, "big")


@pytest.mark.parametrize("build", [transfer.seed_archive, transfer.seed_records])
@pytest.mark.parametrize("path", ["../x", "/etc/passwd", "a/../../x", "/workspace", ""])
def test_seed_paths_outside_the_workspace_are_refused(build: Any, path: str) -> None:
    """``..``, absolute paths elsewhere and the workspace itself are config errors."""
    with pytest.raises(SandboxConfigError):
        build([SeedFile(path, "x")], "/workspace", 100)


@pytest.mark.parametrize("build", [transfer.seed_archive, transfer.seed_records])
def test_seed_total_cap(build: Any) -> None:
    """More than ``max_bytes`` of content is a config error."""
    with pytest.raises(SandboxConfigError):
        build([SeedFile("a", b"x" * 60), SeedFile("b", b"x" * 41)], "/w", 100)


@pytest.mark.parametrize("build", [transfer.seed_archive, transfer.seed_records])
def test_seed_entry_cap(build: Any) -> None:
    """More than ``max_entries`` files and directories is a config error; each directory
    counts once (``a/b``, ``a/c``: three entries)."""
    files = [SeedFile("a/b", "x"), SeedFile("a/c", "y")]
    assert build(files, "/w", 100, 3)
    with pytest.raises(SandboxConfigError, match="more than 2 entries"):
        build(files, "/w", 100, 2)


def test_read_archive_keeps_limit_bytes_and_full_size() -> None:
    """The header's size is the full size; only ``limit`` bytes are read."""
    read = transfer.read_archive(archive(("./f", tarfile.REGTYPE, b"abcdef")), "/w/f", 4)
    assert (read.exists, read.size, read.content) == (True, 6, b"abcd")


def test_read_archive_survives_a_cut_stream() -> None:
    """A stream cut after the needed bytes (the tar was killed) still reads."""
    data = archive(("./f", tarfile.REGTYPE, b"x" * 100_000))[:512 + 1000]
    read = transfer.read_archive(data, "/w/f", 1000)
    assert (read.exists, read.size, len(read.content)) == (True, 100_000, 1000)


@pytest.mark.parametrize(("name", "kind", "reason"), [
    ("./f", tarfile.SYMTYPE, "link"), ("./f", tarfile.LNKTYPE, "link"),
    ("./f", tarfile.DIRTYPE, "regular"), ("./f", tarfile.FIFOTYPE, "regular"),
    ("/etc/shadow", tarfile.REGTYPE, "refused"), ("../f", tarfile.REGTYPE, "refused"),
    ("./other", tarfile.REGTYPE, "unexpected"),
])
def test_read_archive_whitelist(name: str, kind: bytes, reason: str) -> None:
    """Only one regular file with the expected name is accepted."""
    read = transfer.read_archive(archive((name, kind, b"secret")), "/w/f", 100)
    assert not read.exists and read.content == b"" and reason in (read.error or "")


def test_read_archive_garbage() -> None:
    """Bytes that are not a tar are a failed capture, not an exception."""
    assert not transfer.read_archive(b"\x00garbage" * 100, "/w/f", 10).exists


def test_parse_listing() -> None:
    """``size|type|./name`` lines become sorted absolute entries; junk lines are dropped."""
    output = (b"4096|directory|./d\n3|regular file|./d/x y\n7|symbolic link|./l\n"
              b"junk\n0|regular empty file|./e\n")
    listing = transfer.parse_listing(output, "/w", 3)
    assert [(e.path, e.size, e.is_dir) for e in listing.entries] == [
        ("/w/d", 0, True), ("/w/d/x y", 3, False), ("/w/e", 0, False)]
    assert listing.truncated and listing.dropped == 1  # the junk line


def test_a_whole_listing_is_not_truncated() -> None:
    listing = transfer.parse_listing(b"1|f|./a\n2|f|./b\n", "/w", 2)
    assert (len(listing.entries), listing.truncated, listing.dropped) == (2, False, 0)
    assert transfer.parse_listing(b"", "/w", 2) == Listing()


def test_a_line_over_8_kib_is_dropped_and_said() -> None:
    """Issue 38: a line over :data:`MAX_LINE` was dropped after the sandbox's ``head``
    counted it towards the cap, and the listing was not marked truncated: entries past
    the cap went unseen, unsaid. Now it counts as dropped and marks the listing cut."""
    long = "./" + "d" * transfer.MAX_LINE
    listing = transfer.parse_listing(f"1|f|./a\n0|d|{long}\n".encode(), "/w", 10)
    assert [e.path for e in listing.entries] == ["/w/a"]
    assert (listing.truncated, listing.dropped) == (True, 1)


@pytest.mark.parametrize(("output", "error"), [
    (b"0|d|./a\n0|!|./a\n1|f|./b\n", "1 directory could not be read"),
    (b"0|d|./a\n0|d|./a/b\n0|d|./a/b/c\n", "entries deeper than 2 levels are not listed"),
    (b"0|d|./a\n0|!|./a\n0|d|./c\n0|!|./c\n0|d|./b\n0|d|./b/b\n0|d|./b/b/b\n",
     "2 directories could not be read; entries deeper than 2 levels are not listed"),
], ids=["unread", "deep", "both"])
def test_what_a_listing_could_not_reach_is_said(output: bytes, error: str) -> None:
    """Issue 38: a directory below the listed one that the candidate locked hid what was
    in it, unsaid. The sandbox marks it (``0|!|``) and lists one level past the depth, so
    the host can say what it left out; the entries it did reach are kept."""
    listing = transfer.parse_listing(output, "/w", 10, depth=2)
    assert listing.error == error and listing.truncated and listing.dropped == 0
    assert all(e.path.count("/") <= 3 for e in listing.entries) and listing.entries


def test_a_listing_cut_by_the_entry_cap_says_so_whatever_its_lines_were() -> None:
    """The sandbox's ``head`` counts every line, an unreadable directory's mark too: a
    listing with fewer entries than its cap was still cut by it (a listing of ``/``: 9,991
    entries and 10 marks)."""
    listing = transfer.parse_listing(b"0|d|./a\n0|!|./a\n1|f|./b\n", "/w", 2)
    assert (listing.capped, listing.truncated, len(listing.entries)) == (True, True, 2)
    assert not transfer.parse_listing(b"1|f|./a\n1|f|./b\n", "/w", 2).capped


@pytest.mark.parametrize(("output", "cut"), [(b"1|f|./a\n2|f|./b", False),
                                             (b"1|f|./a\n", True)])
def test_a_cut_output_marks_the_listing_truncated(output: bytes, cut: bool) -> None:
    """An output cut short (its cap, a timeout): the last line, without its newline, is
    not read as an entry (its name may be cut), and the listing is truncated."""
    listing = transfer.parse_listing(output, "/w", 10, cut=cut)
    assert [e.path for e in listing.entries] == ["/w/a"]
    assert listing.truncated and listing.dropped == 0


@pytest.mark.parametrize("brk", ["\r", "\x0b", "\x0c", "\x1c", "\x85", "\u2028"])
def test_a_line_break_other_than_newline_is_part_of_a_name(brk: str) -> None:
    """Only a newline ends an entry (the script leaves out names with one): a name holding
    another break ``str.splitlines`` knows is listed whole, not as an entry of its choosing."""
    output = f"0|f|./y{brk}0|f|.\n0|f|./y{brk}0|f|./forged.txt\n".encode()
    listing = transfer.parse_listing(output, "/w", 10)
    assert [e.path for e in listing.entries] == [f"/w/y{brk}0|f|.",
                                                 f"/w/y{brk}0|f|./forged.txt"]


def test_parse_listing_takes_only_ascii_sizes() -> None:
    """A name with a newline puts what it likes where the next line's size goes: "²" is a
    digit to ``str.isdigit`` and raised in ``int`` (the run ended internal_error), and
    Arabic-Indic digits would have been a size. Such lines are dropped."""
    output = "5|f|./a\n²|f|./b\n٣|f|./c\n99999999999999999999|f|./d\n".encode()
    listing = transfer.parse_listing(output, "/w", 10)
    assert [(e.path, e.size) for e in listing.entries] == [("/w/a", 5)]
    assert (listing.truncated, listing.dropped) == (True, 3)


def test_the_read_command_answers_missing_without_a_word(tmp_path: Any) -> None:
    """Nothing at the path (a dangling link is something): exit ``MISSING``, no output; a
    file or a link goes to ``tar``, whose archive :func:`transfer.read_archive` reads."""
    (tmp_path / "f").write_bytes(b"hello")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    gone = subprocess.run(transfer.read_command(str(tmp_path / "gone")), capture_output=True)
    assert (gone.returncode, gone.stdout, gone.stderr) == (transfer.MISSING, b"", b"")
    found = subprocess.run(transfer.read_command(str(tmp_path / "f")), capture_output=True)
    assert transfer.read_archive(found.stdout, str(tmp_path / "f"), 10).content == b"hello"
    link = subprocess.run(transfer.read_command(str(tmp_path / "dangling")),
                          capture_output=True)
    assert transfer.read_archive(link.stdout, "dangling", 10).error == (
        "not captured: the path is a link")
