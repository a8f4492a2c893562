"""Files in and out as tar streams through ``exec`` stdin/stdout.

The archive API cannot see tmpfs mounts, and copying onto the host would
let a link in the sandbox point the host somewhere else. So files go in as a tar built in
memory and extracted by ``tar -x`` in the sandbox, and come out as a tar made by ``tar -c``
in the sandbox and parsed here, in memory, with a whitelist: one regular file with the
expected name; links, devices, directories, absolute or ``..`` names are refused. The
host never opens a path from the sandbox.
"""

from __future__ import annotations

import contextlib
import io
import posixpath
import struct
import tarfile
import time
from collections.abc import Iterator, Sequence

from evalfleet.sandbox import room
from evalfleet.sandbox.command import SeedFile
from evalfleet.sandbox.errors import SandboxConfigError
from evalfleet.sandbox.paths import relative_to, workspace_path
from evalfleet.sandbox.results import FileRead, Listing, ListingEntry, count
from evalfleet.sandbox.seed_limits import entries, parents

#: Bytes of tar framing read past a file's cap (header, a long-name header, padding).
TAR_SLACK = 8 * 1024
#: The page size of the sandbox's tmpfs mounts (x86-64, arm64 with 4 KiB pages).
PAGE = 4096
#: Longest path the judge's ``tar`` can create (``PATH_MAX`` with its NUL): a deliverable
#: whose path in the room is longer is left behind, never a failed room.
PATH_MAX = 4096
#: Longest listing line we accept (``size|type|path``); longer ones are dropped, and the
#: listing says so (:func:`parse_listing`).
MAX_LINE = 8 * 1024


def seed_archive(files: Sequence[SeedFile], workspace: str, max_bytes: int,
                 max_entries: int | None = None) -> bytes:
    """A tar of ``files`` with names relative to ``workspace`` (parents included).

    Raises:
        SandboxConfigError: a path breaks the rules, the total passes ``max_bytes`` or the
            entries (files and their directories) pass ``max_entries``.
    """
    buffer = io.BytesIO()
    now = time.time()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.GNU_FORMAT) as archive:
        for name, mode, data in _entries(files, workspace, max_bytes, max_entries):
            kind = tarfile.DIRTYPE if data is None else tarfile.REGTYPE
            archive.addfile(_info(name, kind, mode, len(data or b""), now),
                            None if data is None else io.BytesIO(data))
    return buffer.getvalue()


def seed_records(files: Sequence[SeedFile], workspace: str, max_bytes: int,
                 max_entries: int | None = None) -> bytes:
    """The same entries as :func:`seed_archive`, as the supervisor's seed records
    (protocol 5): ``[b"D" or b"F"][mode: 4][size: 4] name NUL [data]`` each.

    Raises:
        SandboxConfigError: as :func:`seed_archive`.
    """
    return b"".join(_RECORD.pack(b"D" if data is None else b"F", mode, len(data or b""))
                    + name.encode() + b"\0" + (data or b"")
                    for name, mode, data in _entries(files, workspace, max_bytes, max_entries))


#: A seed record's head: its type, mode and size.
_RECORD = struct.Struct(">cII")


def _entries(files: Sequence[SeedFile], workspace: str, max_bytes: int,
             max_entries: int | None) -> Iterator[tuple[str, int, bytes | None]]:
    """``(name, mode, data)`` per directory (``data`` ``None``, mode 0755) and file, each
    directory once and before what is in it; names relative to ``workspace``."""
    if sum(len(file.data) for file in files) > max_bytes:
        raise SandboxConfigError(f"seed files exceed {max_bytes} bytes")
    names = [relative_to(workspace_path(file.path, workspace), workspace) for file in files]
    if max_entries is not None and entries(names) > max_entries:
        raise SandboxConfigError(f"seed files make more than {max_entries} entries")
    made: set[str] = set()
    for name, file in zip(names, files, strict=True):
        for parent in parents(name):
            if parent not in made:
                made.add(parent)
                yield parent, 0o755, None
        yield name, file.mode & 0o777, file.data


#: :func:`read_command`'s exit status when nothing is at the path (tar never exits so).
MISSING = 44


def read_command(path: str) -> tuple[str, ...]:
    """:func:`capture_command`, once something is at ``path`` (a link included); else exit
    :data:`MISSING`, writing nothing: a missing file is no error, as the combined read
    (``scripts.COLLECT``) says, not tar's words (which differ between GNU and busybox)."""
    check = f'[ -L "$1" ] || [ -e "$1" ] || exit {MISSING}; shift; exec "$@"'
    return ("sh", "-c", check, "sh", path, *capture_command(path))


def capture_command(path: str) -> tuple[str, ...]:
    """``tar -c`` of one path, not following a link at the path itself."""
    return ("tar", "-cf", "-", "-C", posixpath.dirname(path) or "/",
            "./" + posixpath.basename(path))


def read_archive(data: bytes, path: str, limit: int) -> FileRead:
    """The one member of a capture tar: full size from its header, ``limit`` bytes of data.

    ``data`` may be cut anywhere after those bytes (the ``tar`` was stopped at the cap), so
    the content is sliced from the buffer rather than read through ``tarfile``.
    """
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as archive:
            member = archive.next()
    except (tarfile.TarError, EOFError, OSError) as error:
        return FileRead(exists=False, error=f"unreadable archive: {error}")
    if member is None:
        return FileRead(exists=False, error="empty archive")
    refusal = _refusal(member, posixpath.basename(path))
    if refusal:
        return FileRead(exists=False, error=refusal)
    wanted = min(limit, member.size)
    content = data[member.offset_data:member.offset_data + wanted]
    if len(content) < wanted:
        return FileRead(exists=False, error="archive cut short")
    return FileRead(exists=True, size=member.size, content=content)


#: How ``scripts.ENTRIES_FUNCTION`` names a directory (``stat``'s word, GNU find's letter).
DIRECTORY_KINDS = frozenset({"directory", "d"})


def parse_listing(output: bytes, root: str, max_entries: int, *, cut: bool = False,
                  depth: int = 64) -> Listing:
    """Entries from ``scripts.LIST`` output; absolute paths, sorted, at most ``max_entries``.
    One entry per line, split at newlines only: a carriage return (or any other break
    ``str.splitlines`` knows) is part of a name, and reading it as a break would list an
    entry that is not there.

    Nothing is left out unsaid: a line longer than :data:`MAX_LINE`, or one that does not
    read as an entry, is counted in ``dropped``; a last line without its newline (the
    output was ``cut`` short: its cap, a timeout) is left out. Either marks the listing
    ``truncated``, as more entries than ``max_entries`` do: the sandbox's ``head`` counted
    those lines towards the cap, so what lies past it is unknown. Directories that could
    not be read (:data:`UNREAD` lines) and entries deeper than ``depth`` levels (the
    sandbox lists one level more, to know) make it ``truncated`` too, with an ``error``
    saying what was not listed."""
    *lines, tail = output.decode(errors="replace").split("\n")
    unread = sum(line.startswith(UNREAD) for line in lines)
    listed = [line for line in lines if not line.startswith(UNREAD)]
    entries = [entry for line in listed if (entry := _entry(line, root)) is not None]
    shallow = sorted((e for e in entries if _depth(e.path, root) <= depth),
                     key=lambda entry: entry.path)
    dropped, deep = len(listed) - len(entries), len(entries) > len(shallow)
    capped = len(lines) > max_entries  # the sandbox's ``head`` counts every line
    truncated = (capped or len(shallow) > max_entries or dropped > 0 or cut or bool(tail)
                 or bool(unread) or deep)
    return Listing(entries=tuple(shallow[:max_entries]), truncated=truncated, dropped=dropped,
                   error=_unlisted(unread, deep, depth), capped=capped)


#: How a listing line begins for a directory that could not be read or entered.
UNREAD = "0|!|"


def _depth(path: str, root: str) -> int:
    """How many levels below ``root`` an entry's ``path`` is (1: directly in it)."""
    return posixpath.relpath(path, root).count("/") + 1


def _unlisted(unread: int, deep: bool, depth: int) -> str | None:
    """Why part of the tree is not in the listing (``None``: all of it is)."""
    parts = ([f"{unread} director{'y' if unread == 1 else 'ies'} could not be read"]
             if unread else []) + ([f"entries deeper than {depth} levels are not listed"]
                                   if deep else [])
    return "; ".join(parts) or None


def _entry(line: str, root: str) -> ListingEntry | None:
    """One ``size|type|./name`` line as an entry; ``None`` for any other line."""
    size, _, rest = line.partition("|")
    kind, _, name = rest.partition("|")
    bytes_ = count(size)
    if bytes_ is None or not name.startswith("./") or len(line) > MAX_LINE:
        return None
    is_dir = kind in DIRECTORY_KINDS
    return ListingEntry(path=posixpath.join(root, name[2:]), size=0 if is_dir else bytes_,
                        is_dir=is_dir)


def _refusal(member: tarfile.TarInfo, expected: str) -> str | None:
    name = member.name.removeprefix("./")
    if member.name.startswith("/") or ".." in member.name.split("/"):
        return f"refused member name {member.name!r}"
    if name != expected:
        return f"unexpected member {member.name!r}"
    if member.issym() or member.islnk():
        return "not captured: the path is a link"
    if not member.isreg():
        return "not captured: not a regular file"
    return None


def _info(name: str, kind: bytes, mode: int, size: int, mtime: float) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.mode, info.size, info.mtime = kind, mode, size, mtime
    info.uid = info.gid = 0
    return info


def deliverables(data: bytes, wanted: Sequence[str], max_bytes: int) -> tuple[SeedFile, ...]:
    """The regular files of an ``EXPORT`` tar that are (or lie below) a ``wanted`` path,
    read-only, at most ``max_bytes`` in all as the room's tmpfs holds them (whole pages, at
    least one per file); links, devices, FIFOs, odd names, paths the room cannot hold and
    whatever the cap or a cut stream leaves incomplete are dropped. The host opens no
    path."""
    found: list[SeedFile] = []
    total = 0
    with (contextlib.suppress(tarfile.TarError, EOFError, OSError),
          tarfile.open(fileobj=io.BytesIO(data), mode="r|") as archive):
        for member in archive:
            name = _delivered_name(member, wanted)
            if name is None:
                continue
            total += held(member.size)
            content = archive.extractfile(member)
            if total > max_bytes or content is None:
                break
            found.append(SeedFile(name, content.read(), room.DELIVERABLE_MODE))
    return tuple(found)


def held(size: int) -> int:
    """What a file of ``size`` bytes takes on a tmpfs: whole pages, and at least one (its
    inode and its tar header cost something too). Counted by length, 30,000 one-byte files
    were 30 KB that took 117 MiB in the room: its write failed, and the run was void."""
    return max(1, -(-size // PAGE)) * PAGE


def _delivered_name(member: tarfile.TarInfo, wanted: Sequence[str]) -> str | None:
    """The member's relative name if it is a regular file under a wanted path."""
    name = posixpath.normpath(member.name.removeprefix("./"))
    if not member.isreg() or name.startswith(("/", "..")) or "\0" in name:
        return None
    if len(f"{room.DELIVERABLES}/{name}".encode(errors="surrogateescape")) >= PATH_MAX:
        return None
    if any(name == w or name.startswith(w.rstrip("/") + "/") for w in wanted):
        return name
    return None
