"""The inventory: every message literal of AgentClash's runtime/scoring at the pinned commit,
with file and line, mapped to the goldens that show it, or marked with why none can.

``inventory.json`` lists each string literal containing a space in ``runtime/scoring/*.go``
(tests, import paths and struct tags excluded). An entry either names goldens whose
expected output contains the literal (its ``%`` verbs matching anything), or has a
``status`` — ``unreachable`` (no input to AgentClash's validated entry points produces it),
``not-surfaced`` (computed, never in a scorecard), ``not-a-message`` (a needle or a lookup
key), ``wrapper`` (Go's decode-error wrapping, compared as "rejected") — and a ``why``.

The ``reference`` lane (``pytest -m reference``, not part of the default test command: a
fresh machine has no copy of the reference) extracts the literals again from the pinned
commit of the reference's git directory (``AGENTCLASH_GIT_DIR``, or the default below) and
requires them to equal the list; without that directory it skips on a laptop and fails
under ``CI=true``, as a missing service does.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from services import missing_service

HERE = Path(__file__).parent
INVENTORY = json.loads((HERE / "inventory.json").read_text(encoding="utf-8"))
COMMIT = "439e20ba98d49ed3f0e49067cfa416267c5b1a61"
STATUSES = {"unreachable", "not-surfaced", "not-a-message", "wrapper"}
VERB = re.compile(r"%[-+# 0]*[0-9]*(?:\.[0-9]+)?[a-zA-Z]|%%")
CLASSIFIER = ("engine_validators.go", 268, 318)  # keys matched against lower-cased reasons


def golden_texts() -> dict[str, list[str]]:
    texts: dict[str, list[str]] = {}
    for path in sorted((HERE / "goldens").glob("*.json")):
        for case in json.loads(path.read_text(encoding="utf-8"))["cases"]:
            texts[case["id"]] = list(_strings(case["expected"]))
    return texts


def _strings(value: Any) -> Any:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def pattern(text: str) -> re.Pattern[str]:
    """The literal as a regular expression: each ``%`` verb stands for any text."""
    parts, last = [], 0
    for verb in VERB.finditer(text):
        parts += [re.escape(text[last:verb.start()]), "%" if verb.group() == "%%" else ".*?"]
        last = verb.end()
    return re.compile("".join([*parts, re.escape(text[last:])]), re.S)


TEXTS = golden_texts()


def test_the_inventory_is_pinned_and_complete() -> None:
    """One commit; every literal either shown by goldens or explained."""
    assert INVENTORY["commit"] == COMMIT
    for entry in INVENTORY["literals"]:
        assert bool(entry.get("goldens")) != bool(entry.get("status")), entry
        if "status" in entry:
            assert entry["status"] in STATUSES and len(entry["why"]) > 20, entry
    covered = sum(bool(e.get("goldens")) for e in INVENTORY["literals"])
    assert covered >= 400 and len(INVENTORY["literals"]) == 532


@pytest.mark.parametrize("entry", [e for e in INVENTORY["literals"] if e.get("goldens")],
                         ids=lambda e: f"{e['file']}:{e['line']}")
def test_each_mapped_golden_shows_the_literal(entry: dict[str, Any]) -> None:
    """The goldens an entry names exist and hold text the literal produces."""
    regex = pattern(entry["text"])
    lower = entry["file"] == CLASSIFIER[0] and CLASSIFIER[1] <= entry["line"] <= CLASSIFIER[2]
    for golden in entry["goldens"]:
        assert golden in TEXTS, golden
        assert any(regex.search(t.lower() if lower else t) for t in TEXTS[golden]), golden


GIT_DIR = Path(os.environ.get("AGENTCLASH_GIT_DIR",
                              "/work/.mirror/agentclash+agentclash/repo"))


IMPORTS = re.compile(r'^import\s*(?:\([^)]*\)|(?:\w+\s+)?"[^"]*")', re.M)


def go_literals(source: str) -> list[tuple[int, str]]:
    """(line, value) of the string literals in Go source containing a space, skipping
    comments, rune literals, import paths and struct tags."""
    imports = [m.span() for m in IMPORTS.finditer(source)]
    found, i, line = [], 0, 1
    while i < len(source):
        char = source[i]
        if source.startswith("//", i):
            i = source.find("\n", i) if "\n" in source[i:] else len(source)
            continue
        if source.startswith("/*", i) or char in "'\"`":
            end, value = _token_at(source, i)
            in_import = any(a <= i < b for a, b in imports)
            is_tag = char == "`" and re.fullmatch(r'(\w+:"[^"]*"\s*)+', value or "") is not None
            if value is not None and " " in value and not in_import and not is_tag:
                found.append((line, value))
            line += source.count("\n", i, end)
            i = end
            continue
        line += char == "\n"
        i += 1
    return found


def _token_at(source: str, start: int) -> tuple[int, str | None]:
    """The end of the comment, rune or string at ``start``, and a string's value."""
    if source.startswith("/*", start):
        return source.index("*/", start) + 2, None
    if source[start] == "'":
        end = start + 1
        while source[end] != "'":
            end += 2 if source[end] == "\\" else 1
        return end + 1, None
    value, end = _string_at(source, start)
    return end, value


def _string_at(source: str, start: int) -> tuple[str, int]:
    if source[start] == "`":
        end = source.index("`", start + 1)
        return source[start + 1:end].replace("\r", ""), end + 1
    end = start + 1
    while source[end] != '"':
        end += 2 if source[end] == "\\" else 1
    return json.loads(_go_to_json(source[start:end + 1])), end + 1


def _go_to_json(literal: str) -> str:
    """A Go interpreted string literal as JSON (the escapes the package uses)."""
    return re.sub(r"\\([abfnrtv'\"\\]|x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4})", lambda m: {
        "a": "\\u0007", "v": "\\u000b", "'": "'"}.get(m.group(1), m.group(0))
        if not m.group(1).startswith("x") else "\\u00" + m.group(1)[1:], literal)


def _extracted() -> list[dict[str, Any]] | None:
    """The literals at the pinned commit, read when this module is collected (before any
    test runs: later, stray threads of other tests' fake sockets can grab the pipes)."""
    if not GIT_DIR.is_dir():
        return None

    def git(*args: str) -> str:
        return subprocess.run(["git", f"--git-dir={GIT_DIR}", *args], capture_output=True,
                              text=True, check=True).stdout

    names = [n for n in git("ls-tree", "--name-only", f"{COMMIT}:runtime/scoring").split()
             if n.endswith(".go") and not n.endswith("_test.go")]
    return [{"file": name, "line": line, "text": text} for name in sorted(names)
            for line, text in go_literals(git("show", f"{COMMIT}:runtime/scoring/{name}"))]


EXTRACTED = _extracted()


@pytest.mark.reference
def test_the_list_is_every_literal_at_the_pinned_commit() -> None:
    """Re-extracted from runtime/scoring at the pinned commit, the literals are the list."""
    if EXTRACTED is None:
        missing_service("the AgentClash reference's git directory", FileNotFoundError(
            f"{GIT_DIR} (fetch github:agentclash/agentclash, or set AGENTCLASH_GIT_DIR)"))
    listed = [{k: e[k] for k in ("file", "line", "text")} for e in INVENTORY["literals"]]
    assert listed == EXTRACTED


def test_the_scanner_reads_go_literals() -> None:
    """Strings with a space; not comments, runes, import paths or struct tags."""
    source = ('package x\nimport (\n\t"a b"\n\t"fmt"\n)\nimport "c d"\n'
              'type T struct { A string `json:"a" yaml:"b c"` }\n'
              "var r = '\"'\nvar s = \"x y\" // \"not this\"\n/* \"nor this\" */\n"
              'var u = `raw\ntwo s`\nvar t = "a\\"b c\\x41"\n')

    assert go_literals(source) == [(9, "x y"), (11, "raw\ntwo s"), (13, 'a"b cA')]
