"""Count parsing (§7.3): JSON, then JUnit XML, then free text; JUnit verdicts."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalfleet.scoring.record.tally import (
    TestCounts,
    TestVerdict,
    junit_verdicts,
    parse_counts,
    strict_junit,
)

SUITE = ('<testsuite tests="3" failures="1" errors="0"><testcase classname="t" name="a"/>'
         '<testcase classname="t" name="b"><failure message="x"/></testcase>'
         '<testcase classname="t" name="c"><skipped/></testcase></testsuite>')


@pytest.mark.parametrize(("stdout", "stderr", "expected"), [
    ('{"passed": 3, "failed": 1}', "", TestCounts(3, 1, 0, 4)),
    ('{"passed": 3, "failed": 1, "errors": 2, "total": 10}', "", TestCounts(3, 1, 2, 10)),
    ('{"passed": 1, "error": 2}', "", TestCounts(1, 0, 2, 3)),
    ('  {"total": 5}\n', "", TestCounts(0, 0, 0, 5)),
    ("", '{"failed": 2}', TestCounts(0, 2, 0, 2)),
    (SUITE, "", TestCounts(2, 1, 0, 3)),
    ('<?xml version="1.0"?>\n<testsuites tests="7" failures="2" errors="1"></testsuites>', "",
     TestCounts(4, 2, 1, 7)),
    ('<testsuites><testsuite tests="2" failures="1" errors="0"/>'
     '<testsuite tests="3" failures="0" errors="1"/></testsuites>', "", TestCounts(3, 1, 1, 5)),
    ("collected 3 items\n" + SUITE + "\ntrailing words", "", TestCounts(2, 1, 0, 3)),
    ("==== 2 passed, 1 failed in 0.12s ====", "", TestCounts(2, 1, 0, 3)),
    ("5 PASSED", "1 error\n2 errors", TestCounts(5, 0, 3, 8)),
    ("Ran 4 tests\nFAILED (failures=1)", "", None),
    ("nothing to see", "", None),
    ('{"passed": "3"}', "3 passed", TestCounts(3, 0, 0, 3)),
    ('["passed", 1]', "", None),
])
def test_parse_counts(stdout: str, stderr: str, expected: TestCounts | None) -> None:
    """The first rule that succeeds wins; free text sums every match."""
    assert parse_counts(stdout, stderr) == expected


def test_json_wins_over_free_text() -> None:
    """A JSON object whose text also reads like "N passed" uses the JSON numbers."""
    assert parse_counts('{"passed": 1, "note": "9 passed"}', "") == TestCounts(1, 0, 0, 1)


def test_broken_xml_falls_back_to_free_text() -> None:
    """Unclosed JUnit XML is not JUnit; free text still applies."""
    assert parse_counts('<testsuite tests="3"> 1 passed', "") == TestCounts(1, 0, 0, 1)


@pytest.mark.parametrize("broken", ['<testsuite tests="9">&boom;', "<testsuite>&#0;</testsuite>",
                                    '<testsuite tests="9"><testcase></failure>'])
def test_xml_broken_inside_the_root_is_not_junit(broken: str) -> None:
    """Malformed XML before the root closes (an undefined entity, a bad character
    reference, mismatched tags) is not JUnit, as in Go: the free text still counts, and
    nothing raises (a candidate's output can hold any of it)."""
    assert parse_counts(broken + " 1 failed", "") == TestCounts(0, 1, 0, 1)
    assert parse_counts("", broken) is None
    assert junit_verdicts(broken) == ()
    assert strict_junit(broken) is None


def test_junit_verdicts_per_test() -> None:
    """Each ``<testcase>`` gives a verdict; non-JUnit output gives none."""
    assert junit_verdicts(SUITE) == (TestVerdict("a", "t", "passed"),
                                     TestVerdict("b", "t", "failed"),
                                     TestVerdict("c", "t", "skipped"))
    assert junit_verdicts("3 passed") == ()


XML_BITS = st.sampled_from(["<testsuite", "<testsuites", ' tests="3"', ">", "</testsuite>",
                            "</testsuites>", "<testcase", "/>", "<failure>", "</failure>",
                            "&boom;", "&amp;", "&#0;", "&#x41;", "<!DOCTYPE x>", "<?xml?>",
                            "<![CDATA[", "]]>", "\x00", "\ufffe", "2 passed", " "])


@settings(max_examples=500, deadline=None)
@given(bits=st.lists(st.one_of(XML_BITS, st.text(max_size=4)), max_size=20))
def test_no_test_output_crashes_the_count_parsers(bits: list[str]) -> None:
    """The test's output is the candidate's to write (a probe's stderr, a print in code
    the tests import): whatever it holds, the parsers answer and never raise."""
    text = "<testsuite" + "".join(bits)
    parse_counts(text, "")
    junit_verdicts(text)
    strict_junit(text)
