"""directory_structure (docs/scoring.md §5.18): exact paths in a listing, no inferred
directories."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from unit.scoring.helpers import run_one
from unit.scoring.validators.grader_events import JSON_VALUES, captured, listed

from evalfleet.scoring.compat import gopath
from evalfleet.scoring.run.records import ValidatorResult

ROOT = "/workspace"
FILES = [{"path": "/workspace/src/main.py", "size": 10},
         {"path": "/workspace/README.md", "size": 3}]


def structure(config: Any, entries: list[Any] | None = None, root: str = ROOT) -> ValidatorResult:
    """Run directory_structure on a listing of ``root``."""
    return run_one("directory_structure", None, config=config, target="file:tree",
                   events=[listed("tree", root, FILES if entries is None else entries)])


@pytest.mark.parametrize(("config", "entries", "root", "verdict", "reason"), [
    ({"required_files": ["src/main.py", "README.md"]}, None, ROOT, "pass", ""),
    ({"required_files": ["/workspace/src/main.py"]}, None, ROOT, "pass", ""),
    ({"required_files": ["./src/main.py"]}, None, ROOT, "fail",
     "missing required files: ./src/main.py"),
    ({"required_files": ["src/*.py", "main.py"]}, None, ROOT, "fail",
     "missing required files: src/*.py, main.py"),
    ({"required_files": ["src/main.py"]}, None, "/workspace/", "pass", ""),
    ({"required_files": ["src/main.py"]}, [{"path": "/workspace//src/./main.py", "size": 1}],
     ROOT, "pass", ""),
    ({"required_files": ["src/main.py"]}, [{"path": "src/main.py", "size": 1}], ROOT, "pass", ""),
    ({"required_files": ["main.py"]}, [{"path": "src/main.py", "size": 1}], ROOT, "fail",
     "missing required files: main.py"),
    ({"forbidden_files": [".env", "README.md"]}, None, ROOT, "fail",
     "forbidden files present: README.md"),
    ({"forbidden_files": [".env"]}, None, ROOT, "pass", ""),
    ({"required_directories": ["src/"]}, None, ROOT, "fail",
     "missing required directories: src/"),
    ({"required_directories": ["src"]}, [{"path": "/workspace/src", "size": 0}], ROOT, "pass", ""),
    ({"required_directories": ["src/"]}, [{"path": "/workspace/src/", "size": 0}], ROOT, "pass",
     ""),
    ({"required_directories": ["src//"]}, [{"path": "/workspace/src", "size": 0}], ROOT, "fail",
     "missing required directories: src//"),
    ({"required_directories": ["/workspace/src/"]},
     [{"path": "/workspace/src/", "size": 0, "is_dir": True}], ROOT, "pass", ""),
    ({"required_directories": ["."]}, [{"path": "/workspace", "size": 0}], ROOT, "pass", ""),
    ({"required_files": ["a"], "forbidden_files": ["README.md"], "required_directories": ["d/"]},
     None, ROOT, "fail", "missing required files: a; forbidden files present: README.md; "
                         "missing required directories: d/"),
    ({}, [], ROOT, "pass", ""),
    ({"Required_Files": ["x"], "globs": ["*"]}, None, ROOT, "fail", "missing required files: x"),
])
def test_structure(config: dict[str, Any], entries: list[Any] | None, root: str, verdict: str,
                   reason: str) -> None:
    """Absolute and root-relative paths match exactly; directories are never inferred."""
    result = structure(config, entries, root)

    assert (result.verdict, result.reason) == (verdict, reason)


@pytest.mark.parametrize(("config", "reason"), [
    (None, "directory_structure config is required"),
    ({"required_files": "src/main.py"}, "invalid directory_structure config: json: cannot "
     "unmarshal string into Go struct field directoryStructureConfig.required_files of type "
     "[]string"),
    ({"forbidden_files": [1]}, "invalid directory_structure config: json: cannot unmarshal "
     "number into Go struct field directoryStructureConfig.forbidden_files of type string"),
    ([], "invalid directory_structure config: json: cannot unmarshal array into Go value of "
         "type scoring.directoryStructureConfig"),
])
def test_config_errors(config: Any, reason: str) -> None:
    """A missing config (run time only) or a wrongly typed one is an error classed pack_error."""
    result = structure(config)

    assert (result.state, result.outcome_class, result.reason) == ("error", "pack_error", reason)


@pytest.mark.parametrize(("content", "reason"), [
    ("src/main.py", "parse directory listing: invalid character 's' looking for beginning "
                    "of value"),
    ('{"entries": {}}', "parse directory listing: json: cannot unmarshal object into Go struct "
                        "field DirectoryListingResult.entries of type []scoring.DirectoryEntry"),
    ('{"entries": [{"path": "a", "size": 1.5}]}', "parse directory listing: json: cannot "
     "unmarshal number 1.5 into Go struct field DirectoryEntry.size of type int64"),
])
def test_unparseable_listing_is_error(content: str, reason: str) -> None:
    """An actual that is not a listing is an error of the evaluated content."""
    result = run_one("directory_structure", None, config={"required_files": ["a"]},
                     target="file:tree", events=[captured("tree", content)])

    assert (result.state, result.outcome_class) == ("error", "evaluator_error")
    assert result.reason == reason


def test_listing_from_captured_json() -> None:
    """A captured file holding listing JSON is read like a listing (null entries allowed)."""
    content = '{"path": "/w", "entries": [null, {"path": "/w/a.txt", "is_dir": false}]}'
    result = run_one("directory_structure", None, config={"required_files": ["a.txt", ""]},
                     target="file:tree", events=[captured("tree", content)])

    assert result.verdict == "pass"


def test_missing_listing_is_unavailable() -> None:
    """No listing event leaves the validator unavailable."""
    result = run_one("directory_structure", None, config={}, target="file:tree", events=[])

    assert result.state == "unavailable"
    assert result.reason == 'file capture key "tree" is unavailable'


@pytest.mark.parametrize(("base", "target", "expected"), [
    ("/workspace", "/workspace/src/main.py", "src/main.py"),
    ("/workspace/", "/workspace/src/", "src"),
    ("/workspace", "/workspace", "."),
    ("/a/b", "/a", ".."),
    ("/a/b", "/a/c/d", "../c/d"),
    ("/", "/x", "x"),
    ("", "a/b", "a/b"),
    ("a", "a/..", "../."),
    ("//a", "/a/b", "b"),
    ("../a", "../b", "../b"),
])
def test_rel(base: str, target: str, expected: str) -> None:
    """gopath.rel follows Go's filepath.Rel (cleaning, "..", a kept target of ".")."""
    assert expected == gopath.rel(base, target)


@pytest.mark.parametrize(("base", "target"), [("/a", "b"), ("a", "/b"), ("..", "a")])
def test_rel_refuses(base: str, target: str) -> None:
    """Mixed absolute/relative paths, or climbing out of a base "..", are Rel errors."""
    with pytest.raises(gopath.RelError):
        gopath.rel(base, target)


@given(config=JSON_VALUES, root=st.text(max_size=10),
       entries=st.lists(st.fixed_dictionaries({"path": st.text(max_size=10)}), max_size=4),
       content=st.text())
def test_never_raises(config: Any, root: str, entries: list[Any], content: str) -> None:
    """Arbitrary configs, listings and captured text give a result, never an exception."""
    assert structure(config, entries, root).state in {"available", "error"}
    result = run_one("directory_structure", None, config=config, target="file:tree",
                     events=[captured("tree", content)])
    assert result.state in {"available", "error"}


def gapped_listing(config: Any, gap: dict[str, Any],
                   entries: list[Any] | None = None) -> ValidatorResult:
    """directory_structure on a listing with evalfleet's ``gap`` fields in its event."""
    event = listed("tree", ROOT, FILES if entries is None else entries)
    event["payload"].update(gap)
    return run_one("directory_structure", None, config=config, target="file:tree",
                   events=[event])


CUT = {"truncated": True, "max_entries": 2}
FAILED = {"error": "cannot open directory"}
DROPPED = {"truncated": True, "max_entries": 10_000, "dropped": 3}
GAPS = [(CUT, "a listing cut at its entry cap"),
        (FAILED, "a listing that failed (cannot open directory)"),
        (DROPPED, "a listing that left out 3 entries (their lines were over 8 KiB)")]


@pytest.mark.parametrize(("gap", "named"), GAPS)
@pytest.mark.parametrize(("config", "verdict", "reason"), [
    ({"forbidden_files": ["secrets.txt"]}, "fail",
     "forbidden files cannot be shown absent from {named}: secrets.txt"),
    ({"forbidden_files": ["README.md", "secrets.txt"]}, "fail",
     "forbidden files present: README.md"),
    ({"required_files": ["README.md"], "required_directories": ["src/main.py"]}, "pass", ""),
    ({"required_files": ["gone.py"], "forbidden_files": ["secrets.txt"]}, "fail",
     "missing required files from {named}: gone.py; forbidden files cannot be shown absent "
     "from {named}: secrets.txt"),
    ({"required_directories": ["lib"]}, "fail",
     "missing required directories from {named}: lib"),
])
def test_a_listing_that_is_not_whole_cannot_show_a_file_absent(
        gap: dict[str, Any], named: str, config: dict[str, Any], verdict: str,
        reason: str) -> None:
    """Found by a red-team pass (the cut) and issue 38 (the rest): a submission that makes
    enough entries pushes a forbidden file past the listing's cap (10,000); one that makes
    lines over 8 KiB had them dropped, after the sandbox counted them towards the cap; one
    that made the listing fail left an empty listing with no error. None of them can show
    a file absent: ``forbidden_files`` fail, and what is missing is named as missing from
    the gap. What is seen counts as seen."""
    result = gapped_listing(config, gap)
    assert (result.verdict, result.reason) == (verdict, reason.format(named=named))


def test_a_whole_listing_reads_as_agentclashs() -> None:
    assert structure({"forbidden_files": ["secrets.txt"]}).verdict == "pass"
    assert gapped_listing({"forbidden_files": ["secrets.txt"]},
                          {"truncated": False, "dropped": 0, "error": ""}).verdict == "pass"


@pytest.mark.parametrize("gap", [{"truncated": "yes"}, {"dropped": True}, {"dropped": "3"},
                                 {"error": 7}])
def test_gap_fields_of_the_wrong_type_are_not_read(gap: dict[str, Any]) -> None:
    """evalfleet's fields are read only as the worker writes them."""
    assert gapped_listing({"forbidden_files": ["secrets.txt"]}, gap).verdict == "pass"
