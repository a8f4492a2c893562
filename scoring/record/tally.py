"""Test counts from a test command's output (docs/scoring.md §7.3), and JUnit verdicts.

Parsing runs on ``trim(stdout + "\\n" + stderr)``; the first parser that succeeds wins:

1. JSON: the whole text is one object with any of ``passed``, ``failed``, ``errors`` (or
   ``error``), ``total`` (integers); ``total`` defaults to the sum.
2. JUnit XML: a ``<testsuite tests failures errors>`` root, or ``<testsuites>`` with its
   own totals (``tests`` > 0) or else the sum of its suites; passed = tests − failures −
   errors. Text before the root element is skipped and text after it ignored, as Go's
   ``xml.Unmarshal`` does.
3. Free text: every case-insensitive ``<int> passed|failed|error|errors``, summed.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from typing import Any

#: Go's ``(?i)(\d+)\s+(passed|failed|error|errors)\b``: ASCII digits, spaces and word
#: boundaries (Python's are Unicode's: "٣ passed" is no count in Go). A match starts where
#: a run of digits starts, as Go's leftmost match does; Python's backtracking would
#: otherwise retry from every digit of a run (quadratic: 2 MiB of digits took hours).
_FREE_TEXT = re.compile(r"(?<![0-9])([0-9]+)[\t\n\f\r ]+(passed|failed|errors|error)\b",
                        re.IGNORECASE | re.ASCII)
_JUNIT_START = re.compile(r"<testsuites?[\s>/]")
_VERDICT_TAGS = (("failure", "failed"), ("error", "error"), ("skipped", "skipped"))


@dataclass(frozen=True)
class TestCounts:
    """Counts parsed from a test run (``total`` is the declared or summed total)."""

    __test__ = False  # not a pytest class, whatever its name

    passed: int
    failed: int
    errors: int
    total: int
    skipped: int = 0
    """Tests reported skipped (counted only by :func:`strict_junit`)."""


@dataclass(frozen=True)
class TestVerdict:
    """One JUnit ``<testcase>``: ``passed``, ``failed``, ``error`` or ``skipped``."""

    __test__ = False  # not a pytest class, whatever its name

    name: str
    classname: str
    verdict: str


def parse_counts(stdout: str, stderr: str) -> TestCounts | None:
    """Counts from a test command's output, or ``None`` when nothing parses."""
    combined = (stdout + "\n" + stderr).strip()
    return from_json(combined) or from_junit(combined) or from_free_text(combined)


def from_json(text: str) -> TestCounts | None:
    """Rule 1: the whole text is a JSON object carrying count fields."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):  # nested past Python's stack: no count object
        return None
    if not isinstance(data, dict):
        return None
    fields = {name: data.get(name) for name in ("passed", "failed", "errors", "error", "total")}
    if not any(_is_int(value) for value in fields.values()):
        return None
    passed, failed = _int(fields["passed"]), _int(fields["failed"])
    errors = _int(fields["errors"]) if _is_int(fields["errors"]) else _int(fields["error"])
    total = _int(fields["total"]) if _is_int(fields["total"]) else passed + failed + errors
    return TestCounts(passed=passed, failed=failed, errors=errors, total=total)


def from_junit(text: str) -> TestCounts | None:
    """Rule 2: a JUnit XML report (``<testsuite>`` or ``<testsuites>``)."""
    root = junit_root(text)
    if root is None:
        return None
    suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
    if root.tag == "testsuites" and _attr(root, "tests") > 0:
        suites = [root]
    tests = sum(_attr(suite, "tests") for suite in suites)
    failures = sum(_attr(suite, "failures") for suite in suites)
    errors = sum(_attr(suite, "errors") for suite in suites)
    return TestCounts(passed=tests - failures - errors, failed=failures, errors=errors,
                      total=tests)


def from_free_text(text: str) -> TestCounts | None:
    """Rule 3: ``N passed``, ``N failed``, ``N error(s)`` anywhere, summed."""
    sums = {"passed": 0, "failed": 0, "error": 0}
    matches = _FREE_TEXT.findall(text)
    if not matches:
        return None
    for number, word in matches:
        key = "error" if word.lower().startswith("error") else word.lower()
        sums[key] = _int64(sums[key] + _go_atoi(number))
    return TestCounts(passed=sums["passed"], failed=sums["failed"], errors=sums["error"],
                      total=_int64(sum(sums.values())))


def _go_atoi(digits: str) -> int:
    """AgentClash's ``mustAtoi``: digit by digit in Go's ``int``, wrapping past 2⁶³ (a
    number of 5,000 digits is a count there, where Python's ``int()`` refuses it)."""
    value = 0
    for digit in digits:
        value = _int64(value * 10 + ord(digit) - ord("0"))
    return value


def _int64(value: int) -> int:
    """``value`` as Go's 64-bit ``int`` holds it (two's complement wrap-around)."""
    return (value + (1 << 63)) % (1 << 64) - (1 << 63)


def strict_junit(text: str) -> tuple[TestCounts, tuple[TestVerdict, ...]] | None:
    """A judge's own JUnit report (evalfleet's extension, not AgentClash's rule 2): counts
    from its test cases, a skipped test not counted as passed; ``None`` if not JUnit."""
    root = junit_root(text.strip())
    if root is None:
        return None
    verdicts = tuple(_verdict(case) for case in root.iter("testcase"))
    tally = {name: sum(v.verdict == name for v in verdicts)
             for name in ("passed", "failed", "error", "skipped")}
    return TestCounts(passed=tally["passed"], failed=tally["failed"], errors=tally["error"],
                      total=len(verdicts), skipped=tally["skipped"]), verdicts


def junit_verdicts(stdout: str, stderr: str = "") -> tuple[TestVerdict, ...]:
    """Per-test verdicts when the output is a JUnit XML report (else empty)."""
    root = junit_root((stdout + "\n" + stderr).strip())
    if root is None:
        return ()
    return tuple(_verdict(case) for case in root.iter("testcase"))


def junit_root(text: str) -> ET.Element | None:
    """The first ``<testsuite(s)>`` element of ``text`` and its subtree, or ``None``."""
    start = _JUNIT_START.search(text)
    if start is None:
        return None
    parser: ET.XMLPullParser[ET.Element] = ET.XMLPullParser(events=("start", "end"))
    root: ET.Element | None = None
    for chunk_start in range(start.start(), len(text), 65536):
        try:
            parser.feed(text[chunk_start:chunk_start + 65536])
        except ET.ParseError:
            return _closed_root(parser, root)  # junk after the root is ignored, as in Go
        root, done = _advance(parser, root)
        if done:
            return root
    return None


def _closed_root(parser: ET.XMLPullParser[ET.Element],
                 root: ET.Element | None) -> ET.Element | None:
    """After a parse error: the root if its end tag was already seen, else ``None``."""
    root, done = _advance(parser, root)
    return root if done else None


def _advance(parser: ET.XMLPullParser[ET.Element],
             root: ET.Element | None) -> tuple[ET.Element | None, bool]:
    """Consume parser events: the root element, and whether it has closed (``None`` and
    done when the XML breaks before the root closes: then it is not JUnit)."""
    try:
        for event, element in parser.read_events():  # type: ignore[misc]  # typeshed: a union
            if not isinstance(element, ET.Element):
                continue
            root = element if root is None and event == "start" else root
            if event == "end" and element is root:
                return root, True
    except ET.ParseError:  # raised here, not by feed(): the parser queues its error
        return None, True
    return root, False


def _verdict(case: ET.Element) -> TestVerdict:
    verdict = next((name for tag, name in _VERDICT_TAGS if case.find(tag) is not None),
                   "passed")
    return TestVerdict(name=case.get("name", ""), classname=case.get("classname", ""),
                       verdict=verdict)


def _attr(element: ET.Element, name: str) -> int:
    try:
        return int(element.get(name, "0"))
    except ValueError:
        return 0


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _int(value: Any) -> int:
    return value if _is_int(value) else 0
