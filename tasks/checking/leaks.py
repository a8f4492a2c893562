"""Hidden tests that reach a run's result (issue 39): a result goes back to the platform,
and often to the agent, so a hidden test's source in it — printed by a deliverable that
read it, or shown by the test framework's tracebacks — hands the next submission the
answers. The check reads every forgery's result for the pack's test files' lines.

A file *leaks* when most of its distinctive lines (:data:`MIN_LINE` characters or more,
stripped) appear in the strings of the result's events: a line or two in common is
chance (a pytest summary names a test), the file's body is not.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ..messages import RunResult

#: The shortest line that counts: shorter ones (``import os``, ``return found``) occur
#: anywhere.
MIN_LINE = 16
#: The share of a file's distinctive lines that make it leaked.
SHARE = 0.5
#: How the check's finding of a leak begins.
LEAK = "hidden test content reaches the result of forgery "


def leaked(test_files: Mapping[str, str], result: RunResult) -> list[str]:
    """The paths of ``test_files`` (path → source) whose content reaches ``result``."""
    text = "\n".join(_strings(result.events))
    return [path for path, source in test_files.items() if _leaks(source, text)]


def _leaks(source: str, text: str) -> bool:
    lines = {line.strip() for line in source.splitlines() if len(line.strip()) >= MIN_LINE}
    found = sum(line in text for line in lines)
    return bool(lines) and found >= max(2, SHARE * len(lines))


def _strings(value: Any) -> Iterator[str]:
    """Every string in ``value`` (events: dicts, lists, strings), depth first."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)
