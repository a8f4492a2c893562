"""The worker's event payloads: written and read through one module, each one reading
back as it was written (and AgentClash's optional keys left out as AgentClash does)."""

from __future__ import annotations

from evalfleet.scoring.record import grader_events


def test_a_capture_reads_back_as_written() -> None:
    written = grader_events.file_captured("k", "a.txt", True, 6, "hello\n", truncated=True)
    assert written == {"key": "k", "path": "a.txt", "exists": True, "size": 6,
                       "content": "hello\n", "truncated": True}
    assert grader_events.capture(written) == written


def test_a_missing_file_has_no_content_and_no_truncated_key() -> None:
    written = grader_events.file_captured("k", "nope", False, 0, "", truncated=False)
    assert written == {"key": "k", "path": "nope", "exists": False, "size": 0}
    assert grader_events.capture(written) == {**written, "content": "", "truncated": False}


def test_a_listing_reads_back_with_its_entries() -> None:
    written = grader_events.directory_listed("l", "src", [("src/a", 3, False), ("src/d", 0, True)],
                                             truncated=True, max_entries=2)
    assert written["entries"] == [{"path": "src/a", "size": 3}, {"path": "src/d", "size": 0,
                                                                 "is_dir": True}]
    assert written["max_entries"] == 2 and written["truncated"] is True
    read = grader_events.listing(written)
    assert read is not None and [e["is_dir"] for e in read["entries"]] == [False, True]


def test_a_listing_reads_back_what_it_left_out() -> None:
    """evalfleet's own fields: the entries dropped and the error, each only when set."""
    written = grader_events.directory_listed("l", "src", [], truncated=True, max_entries=2,
                                             dropped=3, error="the listing timed out")
    assert (written["dropped"], written["error"]) == (3, "the listing timed out")
    read = grader_events.listing(written)
    assert read is not None and (read["truncated"], read["dropped"], read["error"]) == (
        True, 3, "the listing timed out")
    whole = grader_events.directory_listed("l", "src", [], truncated=False, max_entries=2)
    assert whole == {"key": "l", "path": "src", "entries": []}
    assert grader_events.listing(whole) == {"key": "l", "path": "src", "entries": []}


def test_a_code_execution_payload_has_exactly_agentclashs_fields_then_verdicts() -> None:
    fields = {name: None for name in grader_events.CODE_EXECUTION} | {
        "validator_key": "v", "stdout": "1 passed", "passed_tests": 1, "extra": "dropped"}
    verdicts = [{"name": "a", "classname": "", "verdict": "passed"}]
    written = grader_events.code_executed(fields, verdicts)
    assert list(written) == [*grader_events.CODE_EXECUTION, "test_cases"]
    read = grader_events.code_execution(written)
    assert read is not None and (read["validator_key"], read["passed_tests"]) == ("v", 1)


def test_a_refusal_reads_back_its_reason() -> None:
    written = grader_events.submission_refused("a/b", "the sandbox cannot hold `a/b`")
    assert written == {"path": "a/b", "reason": "the sandbox cannot hold `a/b`"}
    assert grader_events.refusal(written) == "the sandbox cannot hold `a/b`"
    assert grader_events.refusal({"path": "a/b"}) == grader_events.UNHELD
