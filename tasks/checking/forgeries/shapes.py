"""The forgeries of the battery shaped to void a run (issue 38): paths the sandbox cannot
seed, trees too deep, wide or locked for the fleet's own walks (the evaluator's preparation,
listings, exports, the reuse reset), and a listing padded past its cap. Each plants the
answers and deliverables as the others do, so only its shape can keep it from losing.

A candidate chooses its shape, so any end but a scored loss would be a verdict it chose:
each is :attr:`~.kit.Forgery.must_lose`, and a refusal wins too.
:data:`SHAPES` is their part of :data:`.battery.FORGERIES`, in the report's
order, after the fleet's.
"""

from __future__ import annotations

import posixpath
import shlex
import textwrap
from typing import Any

from evalfleet.sandbox.profile import Limits
from evalfleet.sandbox.seed_limits import NAME_MAX, PATH_MAX

from .kit import Builder, Forgery, Target, answered, submission

#: Levels of the deep tree, each a name of :data:`NAME_MAX` bytes: far past ``PATH_MAX``
#: and the profile's ``tree_depth`` (its default).
DEPTH = 2_000
#: Empty files of the wide tree: past the entries the evaluator's preparation walks, the
#: profile's ``tree_entries`` (its default), and so past its listing's cap too.
WIDE = Limits.tree_entries + 1
#: Levels of the locked tree (each of mode 000, with :data:`LOCKED_FILES` files inside).
LOCKED = 8
LOCKED_FILES = 3
#: A name of the deep tree.
LONG_NAME = "d" * NAME_MAX


def _void(name: str, tries: str, files: dict[str, Any], *commands: str) -> Forgery:
    """A forgery that must lose: any other end is a verdict its candidate chose."""
    return Forgery(name, tries, submission(files, *commands), must_lose=True)


def _long_name(aim: Target) -> Forgery:
    return _void("name past NAME_MAX", f"a file whose name is {NAME_MAX + 1} bytes, which no "
                 "file system takes", answered(aim, **{"n" * (NAME_MAX + 1): ""}))


def _long_path(aim: Target) -> Forgery:
    parts = PATH_MAX // (NAME_MAX + 1) + 1
    path = "/".join([LONG_NAME] * parts)
    return _void("path past PATH_MAX", f"a file at a path of {len(path)} bytes (names of "
                 f"{NAME_MAX}), which the kernel cannot open", answered(aim, **{path: ""}))


def _file_and_directory(aim: Target) -> Forgery:
    return _void("file and directory", "the files a and a/b: a path that would be both a "
                 "file and a directory", answered(aim, **{"a": "", "a/b": ""}))


def _too_many_files(aim: Target) -> Forgery:
    count = Limits.seed_files + 1
    files = {f"f{index}": "" for index in range(count)}
    return _void("too many files", f"{count} files, past the profile's seed_files (its "
                 "default)", answered(aim, **files))


def _around(aim: Target) -> list[str]:
    """The workspace and the directory of every answer and deliverable, once each."""
    where = [posixpath.dirname(p) or "." for p in (*aim.answers, *aim.deliverables)]
    return list(dict.fromkeys([".", *where]))


def _python_or_sh(script: str, fallback: str) -> str:
    """A command that runs the seeded ``script`` with python3, or ``fallback`` in an image
    without python3 (the shell's loops are slower, not different)."""
    return (f"if command -v python3 >/dev/null 2>&1; then python3 {script}; "
            f"else {fallback}; fi; true")


def _deep_tree(aim: Target) -> Forgery:
    where = _around(aim)
    tree = textwrap.dedent(f"""\
        import os
        home = os.getcwd()
        for where in {where!r}:
            try:
                os.chdir(os.path.join(home, where))
                for _ in range({DEPTH}):
                    os.mkdir({LONG_NAME!r})
                    os.chdir({LONG_NAME!r})
            except OSError:
                pass
        """)
    nest = (f"i=0; while [ $i -lt {DEPTH} ] && mkdir {LONG_NAME} && cd {LONG_NAME}; "
            "do i=$((i+1)); done")
    fallback = f"for d in {_quoted(where)}; do (cd \"$d\" && {nest}); done"
    return _void("deep tree", f"a tree {DEPTH} levels deep of {NAME_MAX}-byte names in the "
                 "workspace and around every answer and deliverable", answered(
                     aim, **{"deep_tree.py": tree}), _python_or_sh("deep_tree.py", fallback))


def _wide_tree(aim: Target) -> Forgery:
    return _void("wide tree", f"{WIDE} empty files in one directory of the workspace",
                 answered(aim, **{"fill.py": _fill(["wide"], WIDE)}),
                 _python_or_sh("fill.py", _fill_sh(["wide"], WIDE)))


def _locked_tree(aim: Target) -> Forgery:
    where = _around(aim)
    files = " && ".join(f': > "$p/f{index}"' for index in range(LOCKED_FILES))
    nest = (f'p=locked; all=; i=0; while [ $i -lt {LOCKED} ] && mkdir "$p" && {files}; '
            'do all="$p $all"; p="$p/locked"; i=$((i+1)); done; chmod 000 $all')
    lock = f"for d in {_quoted(where)}; do (cd \"$d\" && {nest}); done; true"
    return _void("locked tree", f"directories of mode 000 nested {LOCKED} deep, files in "
                 "each, in the workspace and around every answer and deliverable",
                 answered(aim), lock)


def _padded_listing(aim: Target) -> Forgery:
    where = list(aim.listings or (".",))
    count = Limits.listing_entries + 1
    return _void("padded listing", f"{count} empty files, past the listing cap (its default), "
                 "in every directory the pack lists (the workspace when it lists none)",
                 answered(aim, **{"fill.py": _fill(where, count)}),
                 _python_or_sh("fill.py", _fill_sh(where, count)))


def _fill(where: list[str], count: int) -> str:
    """A Python script that creates ``count`` empty files in each directory of ``where``
    (by ``mknod``: one system call a file, half the time of an open and a close under
    gVisor)."""
    return textwrap.dedent(f"""\
        import os
        for where in {where!r}:
            try:
                os.makedirs(where, exist_ok=True)
                for index in range({count}):
                    os.mknod(os.path.join(where, "pad%d" % index), 0o644)
            except OSError:
                pass
        """)


def _fill_sh(where: list[str], count: int) -> str:
    """:func:`_fill` in the shell."""
    return (f'for d in {_quoted(where)}; do mkdir -p "$d" && i=0 && '
            f'while [ $i -lt {count} ] && : > "$d/pad$i"; do i=$((i+1)); done; done')


def _quoted(words: list[str]) -> str:
    return " ".join(shlex.quote(word) for word in words)


#: The shapes' forgeries, by name (in the report's order, after the fleet's).
SHAPES: dict[str, Builder] = {
    "name past NAME_MAX": _long_name,
    "path past PATH_MAX": _long_path,
    "file and directory": _file_and_directory,
    "too many files": _too_many_files,
    "deep tree": _deep_tree,
    "wide tree": _wide_tree,
    "locked tree": _locked_tree,
    "padded listing": _padded_listing,
}
