"""A run report for people: what ``evalfleet run`` and ``evalfleet score`` print in a terminal.

The score and result, then tables of dimensions (score, weight, gate, pass) and validators
(verdict, score, reason), the failing hidden tests by name with the first lines of their
output, the candidate's commands that failed, and the limits hit and resources used.
Rendered with rich, which honours ``NO_COLOR``; ``--format json`` still prints the
document, and output that is not a terminal stays what it was (see :func:`chosen_format`).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TextIO

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from evalfleet.scoring import Dimension, EvaluationSpec, Scorecard
from evalfleet.scoring.record import event_types
from evalfleet.tasks.messages import RunResult

#: Lines of a failing step's output shown under it.
OUTPUT_LINES = 6
#: Failing tests named per test run (the rest are counted).
MAX_TESTS = 10
MiB = 1024 * 1024
VERDICT_STYLES = {"pass": "green", "fail": "red", "win": "green", "draw": "yellow",
                  "loss": "red", "passed": "green", "failed": "red", "error": "red"}
#: Test runners' summary lines that name a failing test (and often its first message line):
#: pytest (``-q``/``-rf``), unittest, ``go test``.
FAILED_TEST_LINES = (
    re.compile(r"^(?:FAILED|ERROR) (\S+)(?: - (.*))?$", re.MULTILINE),
    re.compile(r"^(?:FAIL|ERROR): (\S+ \([^)]*\))$", re.MULTILINE),
    re.compile(r"^\s*--- FAIL: (\S+)", re.MULTILINE),
)


def chosen_format(asked: str | None, plain: str, stream: TextIO | None = None) -> str:
    """``asked``, else ``table`` on a terminal and ``plain`` (today's output) elsewhere."""
    if asked is not None:
        return asked
    out = stream or sys.stdout
    return "table" if out.isatty() else plain


def run_report(result: RunResult, spec: EvaluationSpec | None) -> RenderableType:
    """A published result as a report (a rejected or failed run: why)."""
    title = Text.assemble((result.run_id, "bold"), f"  {result.pack or '-'}",
                          f" / case {result.case_key}" if result.case_key else "")
    card = result.scorecard
    if card is None:
        problems = [Text(f"  {e.field} {e.message}", style="red") for e in result.errors]
        return Group(title, Text(f"{result.outcome}: {result.reason}", style="bold red"),
                     *problems, *_preflight(result))
    return Group(title, *_preflight(result),
                 scorecard_report(card, spec, result.events, result.resources,
                                  result.timings_ms))


def _preflight(result: RunResult) -> list[Text]:
    found = result.preflight
    if found is None or found.status == "passed":
        return []
    return [Text(f"preflight {found.status}: {found.reason}", style="yellow")]


def scorecard_report(card: Scorecard, spec: EvaluationSpec | None,
                     events: Sequence[Mapping[str, Any]],
                     resources: Mapping[str, Any] | None = None,
                     timings_ms: Mapping[str, float] | None = None) -> RenderableType:
    """A scorecard with the evidence it was scored from (``resources``: the run's, when
    known)."""
    parts: list[RenderableType] = [_verdict(card), *_warnings(card),
                                   _heading("Dimensions"), dimensions(card, spec),
                                   _heading("Validators"), validators(card)]
    failing = failing_steps(events)
    if failing:
        parts += [_heading("Failing tests and commands"), *failing]
    parts += [_heading("Limits and resources"), *limits(resources, timings_ms)]
    return Group(*parts)


def _heading(text: str) -> Text:
    return Text(f"\n{text}", style="bold")


def _verdict(card: Scorecard) -> Text:
    score = "-" if card.score is None else str(card.score)
    result = card.result or "no contest"
    return Text.assemble((f"{score}/1000 {result}", f"bold {VERDICT_STYLES.get(result, '')}"),
                         f"  ({card.validity}) {card.overall_reason}")


def _warnings(card: Scorecard) -> list[Text]:
    lines = [card.validity_reason] if card.validity_reason else []
    lines += [w.message for w in card.submission_warnings]
    lines += [v.message for v in card.constraint_violations]
    lines += [card.harness_warning] if card.harness_warning else []
    return [Text(f"! {line}", style="yellow") for line in dict.fromkeys(lines)]


def dimensions(card: Scorecard, spec: EvaluationSpec | None) -> Table:
    """Each dimension: its 0–1000 score (or state), normalized weight, gate and pass."""
    table = _table("dimension", "score", "weight", "gate", "pass", "reason")
    declared = {d.key: d for d in spec.scorecard.dimensions} if spec else {}
    binary = spec is not None and spec.scorecard.strategy == "binary"
    for key, entry in card.dimensions.items():
        part = card.score_breakdown.get(key)
        dimension = declared.get(key)
        table.add_row(key, str(part.score) if part else entry.state,
                      f"{part.weight:.2f}" if part else "-",
                      "gate" if dimension and dimension.gate else "",
                      _passes(dimension, entry.score, binary), entry.reason)
    return table


def _passes(dimension: Dimension | None, score: float | None, binary: bool) -> Text:
    """✓/✗ where the dimension has a bar to clear (a gate, binary, a pass_threshold)."""
    if dimension is None or not (dimension.gate or binary or
                                 dimension.pass_threshold is not None):
        return Text("")
    ok = score is not None and score >= (dimension.pass_threshold or 0.0)
    return Text("✓", style="green") if ok else Text("✗", style="red")


def validators(card: Scorecard) -> Table:
    """Each validator's verdict (its state when it has none), score and reason."""
    table = _table("validator", "type", "verdict", "score", "reason")
    for detail in card.validator_details:
        verdict = detail.verdict or detail.state
        score = "-" if detail.normalized_score is None else f"{detail.normalized_score:.2f}"
        table.add_row(detail.key, detail.type,
                      Text(verdict, style=VERDICT_STYLES.get(verdict, "yellow")), score,
                      detail.reason)
    return table


def _table(*columns: str) -> Table:
    return Table(*columns, box=None, padding=(0, 2), pad_edge=False, header_style="dim")


def failing_steps(events: Iterable[Mapping[str, Any]]) -> list[RenderableType]:
    """The hidden test runs that did not pass every test, and the candidate's commands that
    failed: names first, then the first lines of their output."""
    found: list[RenderableType] = []
    for event in events:
        payload = event.get("payload") or {}
        if event.get("type") == event_types.CODE_EXECUTED and _failed(payload):
            found.append(_test_run(payload))
        elif event.get("type") == event_types.COMMAND_FAILED:
            found.append(_command(payload))
    return found


def _failed(record: Mapping[str, Any]) -> bool:
    total, passed = record.get("total_tests"), record.get("passed_tests")
    return bool(record.get("timed_out") or record.get("execution_error")
                or record.get("exit_code") != 0 or total is None or passed != total)


def _test_run(record: Mapping[str, Any]) -> RenderableType:
    counts = ("timed out" if record.get("timed_out") else
              f"{record.get('passed_tests')}/{record.get('total_tests')} passed"
              if record.get("total_tests") is not None else "no test counts")
    head = Text.assemble((f"{record.get('validator_key')}", "bold"),
                         f": {counts}, exit {record.get('exit_code')}  "
                         f"({record.get('test_command')})")
    output = f"{record.get('stdout') or ''}\n{record.get('stderr') or ''}"
    named = failed_tests(record)
    if not named:
        return Group(head, *_output(record.get("execution_error"), output))
    lines: list[Text] = []
    for name, message in named[:MAX_TESTS]:
        lines.append(Text(f"  ✗ {name}" + (f" — {message}" if message else ""), style="red"))
        lines += [Text(f"      {line[:200]}", style="dim") for line in excerpt(output, name)]
    if len(named) > MAX_TESTS:
        lines.append(Text(f"  … {len(named) - MAX_TESTS} more failing test(s)", style="red"))
    return Group(head, *lines)


def excerpt(output: str, name: str, count: int = 4) -> list[str]:
    """The first lines of a failing test's own output: what follows the first line naming
    it that is not a one-line summary (pytest's ``___ name ___`` header, unittest's
    ``FAIL: name``, go's ``--- FAIL: name``)."""
    short = re.split(r"::|\.", name.split(" ")[0])[-1]
    lines = output.splitlines()
    for at, line in enumerate(lines):
        if short and short in line and not line.startswith(("FAILED ", "ERROR ")):
            return [x for x in lines[at + 1:] if x.strip() and not set(x.strip()) <= {"-"}][
                :count]
    return []


def failed_tests(record: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The failing tests a test run names: its JUnit cases, else its runner's summary
    lines (pytest, unittest, go test), with their message where the line has one."""
    cases = [(".".join(p for p in (c.get("classname"), c.get("name")) if p), "")
             for c in record.get("test_cases") or [] if c.get("verdict") in ("failed", "error")]
    if cases:
        return cases
    output = f"{record.get('stdout') or ''}\n{record.get('stderr') or ''}"
    named: dict[str, str] = {}
    for pattern in FAILED_TEST_LINES:
        for match in pattern.finditer(output):
            groups = [g for g in match.groups() if g is not None]
            named.setdefault(groups[0], groups[1].strip() if len(groups) > 1 else "")
    return list(named.items())


def _command(payload: Mapping[str, Any]) -> RenderableType:
    index = payload.get("command_index")
    how = ("timed out" if payload.get("timed_out") else
           "killed at the memory limit" if payload.get("oom_killed") else
           f"exited {payload.get('exit_code')}")
    head = Text.assemble((f"command {index + 1 if isinstance(index, int) else '?'}", "bold"),
                         f" {how}")
    return Group(head, *_output(payload.get("stderr"), payload.get("stdout"),
                                payload.get("error")))


def _output(*texts: Any) -> list[Text]:
    lines = [line for text in texts for line in str(text or "").splitlines() if line.strip()]
    shown = [Text(f"    {line[:200]}", style="dim") for line in lines[:OUTPUT_LINES]]
    if len(lines) > OUTPUT_LINES:
        shown.append(Text(f"    … {len(lines) - OUTPUT_LINES} more line(s)", style="dim"))
    return shown


def limits(resources: Mapping[str, Any] | None,
           timings_ms: Mapping[str, float] | None = None) -> list[Text]:
    """Where the run ran, its limits, the ones it hit, and what it used."""
    if not resources:
        return [Text("not recorded (scored from events alone)", style="dim")]
    lines = [Text(f"sandbox: {resources.get('image', '-')} "
                  f"({str(resources.get('image_id') or '-').removeprefix('sha256:')[:12]}) "
                  f"on {resources.get('runtime') or '-'}, profile {resources.get('profile')}")]
    given = resources.get("limits") or {}
    if given:
        lines.append(Text(f"limits: memory {_mib(given.get('memory_bytes'))}, "
                          f"{given.get('cpus')} cpu, {given.get('pids')} pids, "
                          f"wall {given.get('wall_timeout_s')} s, "
                          f"output {_mib(given.get('output_cap_bytes'))} per stream"))
    hit = limits_hit(resources)
    lines.append(Text(f"hit: {', '.join(hit)}", style="red") if hit else Text("hit: none"))
    lines.append(_usage(resources))
    if timings_ms and "total" in timings_ms:
        lines.append(Text(f"time: {timings_ms['total'] / 1000:.2f} s in the worker"))
    return lines


def limits_hit(resources: Mapping[str, Any]) -> list[str]:
    """The limits a run hit, by ``resources`` flag."""
    hit = [flag.replace("_", " ") for flag in ("oom_killed", "timed_out", "output_truncated",
                                               "deadline_exceeded") if resources.get(flag)]
    for counter in ("commands_skipped", "captures_truncated"):
        if resources.get(counter):
            hit.append(f"{counter.replace('_', ' ')}: {resources[counter]}")
    return hit


def _usage(resources: Mapping[str, Any]) -> Text:
    used = resources.get("usage")
    if not used:
        why = resources.get("usage_unavailable") or "not measured"
        return Text(f"usage: unavailable ({why})", style="dim")
    parts = []
    if used.get("memory_peak_bytes") is not None:
        parts.append(f"peak memory {_mib(used['memory_peak_bytes'])}")
    if used.get("cpu_seconds") is not None:
        parts.append(f"cpu {used['cpu_seconds']:.2f} s")
    return Text(f"usage: {', '.join(parts) or used}")


def _mib(value: Any) -> str:
    if not isinstance(value, int | float):
        return "-"
    return f"{value / MiB:.1f} MiB" if value % MiB else f"{int(value // MiB)} MiB"
