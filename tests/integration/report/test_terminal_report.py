"""``evalfleet run`` as a pack author sees it in a terminal: the report, from a real sandbox.

The sandbox is created by the CLI under the worker id ``report-test-<pid>`` (its
``evalfleet.worker`` label).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from terminal import in_terminal

FIZZBUZZ = Path(__file__).parents[3] / "examples" / "packs" / "fizzbuzz-coding"
ESCAPES = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def test_run_in_a_terminal_prints_the_report(docker_client: Any) -> None:
    """No --format on a terminal: dimensions, validators, the failing tests by name (and
    none of their source: the pack runs pytest with ``--tb=line``, so that its hidden
    tests do not reach a result, issue 39), and the sandbox's runtime, limits and usage
    (or why not)."""
    raw = in_terminal("run", str(FIZZBUZZ / "pack.yaml"), "-s",
                      str(FIZZBUZZ / "submissions" / "fail"),
                      EVALFLEET_WORKER_ID=f"report-test-{os.getpid()}")
    text = ESCAPES.sub("", raw).replace("\r\n", "\n")

    assert re.search(r"^cli-\w+  fizzbuzz-coding / case upto-15$", text, re.MULTILINE)
    assert re.search(r"^\d+/1000 loss  \(valid\)", text, re.MULTILINE)
    assert re.search(r"^correctness\s+0\s+0\.70\s*$", text, re.MULTILINE)
    assert re.search(r"^layout\s+directory_structure\s+fail\s+0\.00\s+forbidden files present",
                     text, re.MULTILINE)
    # The pack's verdict is its JUnit report: failing tests by their name there.
    assert "✗ test_fizzbuzz.test_multiples_of_fifteen" in text
    assert "✗ test_fizzbuzz.test_the_hidden_input_to_its_end" in text
    assert "answers()" not in text and "HIDDEN" not in text
    runtime = "runsc" if "runsc" in (docker_client.info().get("Runtimes") or {}) else "runc"
    assert re.search(rf"^sandbox: evalfleet/python:latest \(\w{{12}}\) on {runtime}, "
                     r"profile default$", text, re.MULTILINE)
    assert "hit: none" in text
    assert re.search(r"^usage: (unavailable \(not measured|peak memory )", text, re.MULTILINE)
