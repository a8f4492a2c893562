"""A listing's event carries its cut and its error (issue 38), and scoring reads them:
before, the recorder left the error out, so a listing that failed read as an empty one,
and ``forbidden_files`` passed without looking."""

from __future__ import annotations

from typing import Any

import pytest

from evalfleet.sandbox.results import DirectoryListing, ListingEntry
from evalfleet.scoring import evaluate, load_spec
from evalfleet.tasks.evaluation.recording import directory_listed

SEEN = (ListingEntry("/workspace/a.py", 3, False),)
SPEC = load_spec({
    "name": "t", "version_number": 1, "judge_mode": "deterministic",
    "post_execution_checks": [{"key": "tree", "type": "directory_listing",
                               "path": "/workspace"}],
    "validators": [{"key": "clean", "type": "directory_structure", "target": "file:tree",
                    "config": {"forbidden_files": ["secret.txt"]}}],
    "scorecard": {"dimensions": ["correctness"]}})


def listing(**fields: Any) -> DirectoryListing:
    return DirectoryListing(key="tree", path="/workspace", entries=SEEN, max_entries=10,
                            **fields)


def test_a_whole_listing_has_agentclashs_fields_only() -> None:
    assert directory_listed(listing()) == {
        "key": "tree", "path": "/workspace", "entries": [{"path": "/workspace/a.py", "size": 3}]}


@pytest.mark.parametrize(("fields", "written", "named"), [
    ({"truncated": True}, {"truncated": True, "max_entries": 10},
     "a listing cut at its entry cap"),
    ({"error": "cannot open directory"}, {"error": "cannot open directory"},
     "a listing that failed (cannot open directory)"),
    ({"truncated": True, "error": "the listing timed out"},
     {"truncated": True, "max_entries": 10, "error": "the listing timed out"},
     "a listing that failed (the listing timed out)"),
    ({"truncated": True, "dropped": 2}, {"truncated": True, "max_entries": 10, "dropped": 2},
     "a listing that left out 2 entries (their lines were over 8 KiB)"),
])
def test_the_event_says_what_the_listing_left_out(fields: dict[str, Any],
                                                  written: dict[str, Any], named: str) -> None:
    """Each gap is written after AgentClash's fields, and fails ``forbidden_files`` with a
    reason naming it: the forbidden file may be in what the listing left out."""
    payload = directory_listed(listing(**fields))
    assert payload == {**directory_listed(listing()), **written}
    event = {"type": "grader.verification.directory_listed",
             "occurred_at": "2026-01-01T00:00:00Z", "payload": payload}
    result = evaluate(SPEC, [event]).validator_details[0]
    assert (result.verdict, result.reason) == (
        "fail", f"forbidden files cannot be shown absent from {named}: secret.txt")
