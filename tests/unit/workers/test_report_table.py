"""The run report for people (``evalfleet run`` / ``evalfleet score`` in a terminal).

In-process with ``--format table``; the terminal default and ``NO_COLOR`` through a real
pseudo-terminal at the end.
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from rich.console import Console
from terminal import in_terminal

from evalfleet.scoring import load_pack
from evalfleet.tasks.messages import FieldProblem, Preflight, RunResult
from evalfleet.workers.cli import main
from evalfleet.workers.terminal_report import chosen_format, failed_tests, run_report

PACKS = Path(__file__).parents[3] / "examples" / "packs"
FIZZBUZZ = PACKS / "fizzbuzz-coding"
HYBRID = PACKS / "support-reply-hybrid"
#: An SGR sequence that sets a foreground colour (30–37, 90–97, 38;…).
COLOUR = re.compile(r"\x1b\[(?:[0-9;]*;)?(?:3[0-8]|9[0-7])(?:;[0-9;]*)?m")


def table(*args: str) -> str:
    """``evalfleet score ... --format table`` in-process, 160 columns wide."""
    outcome = CliRunner(env={"COLUMNS": "160"}).invoke(main, ["score", *args, "--format",
                                                              "table"])
    assert outcome.exit_code == 0, outcome.stderr
    return str(outcome.stdout)


def row(text: str, first: str) -> list[str]:
    """The cells of the table row starting with ``first`` (split on runs of spaces)."""
    line = next(line for line in text.splitlines() if line.startswith(first + " "))
    return re.split(r"\s{2,}", line.strip())


def test_a_terminal_gets_the_table_and_anything_else_what_it_got() -> None:
    """Asked wins; otherwise a terminal gets ``table`` and a pipe today's output."""
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    assert chosen_format("json", "summary", Terminal()) == "json"
    assert chosen_format(None, "summary", Terminal()) == "table"
    assert chosen_format(None, "summary", io.StringIO()) == "summary"


def test_dimensions_and_validators_of_a_scored_run() -> None:
    """Each dimension with its 0–1000 score and weight; each validator with its verdict,
    score and reason."""
    text = table("--spec", str(FIZZBUZZ / "pack.yaml"), "--events",
                 str(FIZZBUZZ / "events.json"))

    assert text.startswith("642/1000 draw  (valid) weighted: overall score 0.6417")
    assert row(text, "correctness") == ["correctness", "667", "0.70"]
    assert row(text, "reliability") == ["reliability", "0", "0.10"]
    assert row(text, "tests") == ["tests", "code_execution", "pass", "0.67",
                                  "2 passed, 1 failed (3 total)"]
    assert "not recorded (scored from events alone)" in text


def test_a_failed_gate_is_marked() -> None:
    """A gate dimension says so, and whether it passed its threshold."""
    text = table("--spec", str(HYBRID / "pack.yaml"), "--events",
                 str(HYBRID / "events.rude.json"))

    assert row(text, "courtesy") == ["courtesy", "0", "0.20", "gate", "✗"]
    assert row(text, "greets")[2] == "fail"
    assert text.startswith("0/1000 loss")


def stored_run(tmp_path: Path, **resources: Any) -> Path:
    """A stored RunResult of fizzbuzz's failing submission (events from the pack's file)."""
    events = json.loads((FIZZBUZZ / "events.json").read_text())
    for event in events:
        if event["type"] == "grader.verification.code_executed":
            event["payload"].update(
                stdout="..F\n___ test_multiples_of_fifteen ___\n    def test_x():\n"
                       ">       assert fizzbuzz(15)[14] == 'FizzBuzz'\nE   IndexError\n"
                       "FAILED test_fizzbuzz.py::test_multiples_of_fifteen - IndexError: x\n")
    limits = {"memory_bytes": 512 * 1024 * 1024, "cpus": 1.0, "pids": 256,
              "wall_timeout_s": 600.0, "output_cap_bytes": 1024 * 1024}
    result = RunResult(run_id="r-1", outcome="scored", events=events, timings_ms={"total": 1500},
                       resources={"image": "evalfleet/python:latest",
                                  "image_id": "sha256:1f7f6b4c1717cc4e", "runtime": "runsc",
                                  "profile": "default", "limits": limits, **resources})
    path = tmp_path / "result.json"
    path.write_text(result.to_json())
    return path


def test_failing_tests_by_name_with_their_first_lines(tmp_path: Path) -> None:
    """The failing test is named with its message and the first lines of its own output."""
    text = table("--spec", str(FIZZBUZZ / "pack.yaml"), "--events", str(stored_run(tmp_path)))

    section = text.split("Failing tests and commands")[1].split("Limits and resources")[0]
    lines = [line.strip() for line in section.strip().splitlines()]
    assert lines[0].startswith("tests: 2/3 passed, exit 1")
    assert lines[1:5] == ["✗ test_fizzbuzz.py::test_multiples_of_fifteen — IndexError: x",
                          "def test_x():", ">       assert fizzbuzz(15)[14] == 'FizzBuzz'",
                          "E   IndexError"]


def test_limits_hit_and_usage_unavailable_under_gvisor(tmp_path: Path) -> None:
    """A stored result gives the sandbox, its limits, the ones hit, and why usage is null."""
    path = stored_run(tmp_path, usage=None, oom_killed=True, commands_skipped=2,
                      usage_unavailable="not measured under gVisor")
    text = table("--spec", str(FIZZBUZZ / "pack.yaml"), "--events", str(path))

    limits = text.split("Limits and resources")[1].strip().splitlines()
    assert limits == [
        "sandbox: evalfleet/python:latest (1f7f6b4c1717) on runsc, profile default",
        "limits: memory 512 MiB, 1.0 cpu, 256 pids, wall 600.0 s, output 1 MiB per stream",
        "hit: oom killed, commands skipped: 2",
        "usage: unavailable (not measured under gVisor)",
        "time: 1.50 s in the worker"]


def test_usage_when_measured(tmp_path: Path) -> None:
    """Peak memory and CPU seconds, as the sandbox's cgroup reported them."""
    path = stored_run(tmp_path, usage={"memory_peak_bytes": 25 * 1024 * 1024 + 512 * 1024,
                                       "cpu_seconds": 0.4123})
    text = table("--spec", str(FIZZBUZZ / "pack.yaml"), "--events", str(path))

    assert "usage: peak memory 25.5 MiB, cpu 0.41 s" in text


def test_a_refused_run_says_why() -> None:
    """A result without a scorecard: its outcome, reason, field errors and preflight."""
    result = RunResult(run_id="r-2", outcome="rejected", reason="no passing preflight",
                       pack="answer", errors=[FieldProblem(field="pack", message="never checked")],
                       preflight=Preflight(status="missing", reason="never checked", digest="d"))
    console = Console(width=120, record=True, no_color=True)
    console.print(run_report(result, load_pack(FIZZBUZZ / "pack.yaml").spec))

    assert console.export_text().splitlines() == [
        "r-2  answer", "rejected: no passing preflight", "  pack never checked",
        "preflight missing: never checked"]


@pytest.mark.parametrize(("output", "expected"), [
    ("FAILED t.py::test_a - AssertionError: boom\nERROR t.py::test_b\n",
     [("t.py::test_a", "AssertionError: boom"), ("t.py::test_b", "")]),
    ("FAIL: test_a (pkg.TestX)\nERROR: test_b (pkg.TestX)\n",
     [("test_a (pkg.TestX)", ""), ("test_b (pkg.TestX)", "")]),
    ("=== RUN   TestA\n--- FAIL: TestA (0.00s)\n    a_test.go:9: want 1\n",
     [("TestA", "")]),
    ("3 failed\n", []),
])
def test_failing_tests_are_named_from_their_runner_s_summary(output: str,
                                                            expected: list[Any]) -> None:
    """pytest, unittest and go test summary lines name the failing tests."""
    assert failed_tests({"stdout": output, "stderr": ""}) == expected


def test_junit_cases_name_the_failing_tests_first() -> None:
    """JUnit verdicts (as the sandbox parsed them) win over summary lines."""
    record = {"stdout": "FAILED other", "test_cases": [
        {"name": "coin", "classname": "suite", "verdict": "failed"},
        {"name": "ok", "classname": "suite", "verdict": "passed"}]}

    assert failed_tests(record) == [("suite.coin", "")]


def test_a_terminal_gets_the_coloured_table_by_default() -> None:
    """No --format on a terminal: the report, in colour."""
    text = in_terminal("score", "--spec", str(HYBRID / "pack.yaml"), "--events",
                       str(HYBRID / "events.rude.json"))

    assert "Dimensions" in text and "Validators" in text
    assert COLOUR.search(text), repr(text[:200])


def test_no_color_keeps_the_table_and_drops_the_colour() -> None:
    """NO_COLOR=1 on a terminal: the same report without a colour escape."""
    text = in_terminal("score", "--spec", str(HYBRID / "pack.yaml"), "--events",
                       str(HYBRID / "events.rude.json"), NO_COLOR="1")

    assert "Dimensions" in text and "courtesy" in text
    assert not COLOUR.search(text), repr(text[:200])
