"""The check's reading of hidden tests in a result (issue 39): a file leaks when most of
its distinctive lines reach the strings of the result's events; a line or two in common
(a test's name in a summary) does not make a leak."""

from __future__ import annotations

from typing import Any

import pytest

from evalfleet.tasks.checking.leaks import leaked
from evalfleet.tasks.messages import RunResult

SOURCE = """\
import json

def answer(name, upto):
    found = json.loads(open(name).read())
    assert isinstance(found, list) and len(found) == upto
    return found

def test_multiples_of_fifteen():
    assert all(found[14] == "FizzBuzz" for found in answers())
"""


def result(*strings: str) -> RunResult:
    events: list[dict[str, Any]] = [
        {"type": "grader.verification.code_executed",
         "payload": {"stdout": text, "nested": [{"stderr": text}]}} for text in strings]
    return RunResult(run_id="r", outcome="scored", events=events)


@pytest.mark.parametrize(("strings", "leaks"), [
    ((SOURCE,), ["tests/test_fizz.py"]),  # printed whole
    (("\n".join(SOURCE.splitlines()[2:6]),), ["tests/test_fizz.py"]),  # most of it
    (("FAILED test_fizz.py::test_multiples_of_fifteen - assert False",), []),
    (("def test_multiples_of_fifteen():",), []),  # one line is chance
    (("",), []),
])
def test_a_hidden_test_in_a_result_is_found(strings: tuple[str, ...],
                                           leaks: list[str]) -> None:
    assert leaked({"tests/test_fizz.py": SOURCE, "other.py": "x = 1\n"},
                  result(*strings)) == leaks
