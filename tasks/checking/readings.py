"""What the check reads from a run's :class:`~tasks.messages.RunResult`: verdicts, test
records, failed setup commands, limits hit. Pure functions over published results, so a
check through the fleet reads exactly what a check on this machine does."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from evalfleet.scoring.record import event_types

from ..evaluation.pack_faults import ENVIRONMENT, PACK_ERROR
from ..messages import RunResult

#: Output that says a tool or module the step needs is not in the image.
_MISSING = re.compile(r"command not found|: not found|No module named [\w.'\"]+|"
                      r"No such file or directory|cannot execute", re.IGNORECASE)
#: Exit statuses of a shell that could not find (127) or execute (126) a command.
_MISSING_STATUS = {126: "not executable", 127: "not found"}


def payloads(result: RunResult, event_type: str) -> Iterator[dict[str, Any]]:
    """The payloads of ``result``'s events of one type, in order."""
    for event in result.events:
        if event.get("type") == event_type and isinstance(event.get("payload"), dict):
            yield event["payload"]


def validator_verdicts(result: RunResult) -> dict[str, str]:
    """Each validator's verdict (its state when it has none, e.g. ``unavailable``)."""
    card = result.scorecard
    if card is None:
        return {}
    return {d.key: d.verdict or d.state for d in card.validator_details}


def hidden_test_verdicts(result: RunResult) -> dict[str, str]:
    """Each hidden test's verdict, by ``validator::test`` where the output names tests
    (JUnit), and each test run's counts by ``validator`` (``3/3 passed``, ``timed out``)."""
    found: dict[str, str] = {}
    for record in payloads(result, event_types.CODE_EXECUTED):
        key = str(record.get("validator_key", ""))
        found[key] = counts(record)
        for case in record.get("test_cases") or []:
            name = ".".join(p for p in (case.get("classname"), case.get("name")) if p)
            found[f"{key}::{name}"] = str(case.get("verdict", ""))
    return found


def counts(record: dict[str, Any]) -> str:
    """A test run in a few words: ``2/3 passed``, ``timed out``, ``no counts (exit 1)``."""
    if record.get("timed_out"):
        return "timed out"
    if record.get("execution_error"):
        return "error"
    if record.get("total_tests") is None:
        return f"no counts (exit {record.get('exit_code')})"
    return f"{record.get('passed_tests')}/{record.get('total_tests')} passed"


def first_line(*texts: Any) -> str:
    """The first non-blank line among ``texts`` (stderr first, usually), cut to 160."""
    for text in texts:
        for line in str(text or "").splitlines():
            if line.strip():
                return line.strip()[:160]
    return ""


#: How the reason of a run the pack spoiled starts (:mod:`tasks.evaluation.pack_faults`).
PACK_FAULTS = (ENVIRONMENT, PACK_ERROR)


def pack_fault(result: RunResult) -> str | None:
    """The run's pack fault (its environment check, a failed setup command, …), or None."""
    return result.reason if result.reason.startswith(PACK_FAULTS) else None


def setup_failures(result: RunResult, setup_commands: int) -> list[str]:
    """The pack's setup commands that failed in this run, each in one line."""
    found = []
    for failed in payloads(result, event_types.COMMAND_FAILED):
        index = failed.get("command_index")
        if isinstance(index, int) and index < setup_commands:
            found.append(f"setup command {index + 1} {_how(failed)}")
    return found


def missing_tools(result: RunResult, setup_commands: int) -> list[str]:
    """The submission's commands that could not start (exit 126/127): a tool the image
    lacks. Read on the reference's runs, where that is the environment's fault."""
    found = []
    for failed in payloads(result, event_types.COMMAND_FAILED):
        index, status = failed.get("command_index"), failed.get("exit_code")
        if isinstance(index, int) and index >= setup_commands and status in _MISSING_STATUS:
            found.append(f"command {index - setup_commands + 1} of the submission: "
                         f"{_MISSING_STATUS[status]}: {first_line(failed.get('stderr'))}")
    return found


def _how(step: dict[str, Any]) -> str:
    if step.get("timed_out"):
        return "timed out"
    if step.get("oom_killed"):
        return "was killed at the memory limit"
    status = step.get("exit_code")
    why = first_line(step.get("error"), step.get("stderr"), step.get("stdout"))
    return f"exited {status}" + (f": {why}" if why else "")


def hidden_test_problem(record: dict[str, Any]) -> str | None:
    """Why a hidden test run failed for environmental reasons, or None: it timed out, could
    not start, or a tool or module it needs is missing."""
    name = f"hidden test {record.get('validator_key')} ({record.get('test_command')!r})"
    if record.get("timed_out"):
        return f"{name} timed out after {record.get('timeout_ms')} ms"
    if record.get("execution_error"):
        return f"{name} could not run: {record['execution_error']}"
    status = record.get("exit_code")
    output = f"{record.get('stderr') or ''}\n{record.get('stdout') or ''}"
    if status in _MISSING_STATUS:
        return f"{name}: {_MISSING_STATUS[status]}: {first_line(record.get('stderr'))}"
    missing = _MISSING.search(output)
    if missing and status != 0:
        return f"{name}: {_line_of(output, missing.start())}"
    return None


def _line_of(text: str, at: int) -> str:
    start = text.rfind("\n", 0, at) + 1
    end = text.find("\n", at)
    return text[start:end if end >= 0 else None].strip()[:160]


def files_refused(result: RunResult) -> bool:
    """Whether the sandbox could not hold the submission's files (docs/scoring.md §18): the
    run ended there, a loss, before any command of the pack or the candidate ran."""
    return next(payloads(result, event_types.SUBMISSION_REFUSED), None) is not None


def evaluator_failure(result: RunResult) -> str | None:
    """Why the pack's evaluator script failed in this run, or None."""
    for record in payloads(result, event_types.EVALUATOR_COMPLETED):
        if record.get("timed_out"):
            return f"the evaluator timed out after {record.get('timeout_ms')} ms"
        if record.get("error") or record.get("exit_code") not in (0, None):
            why = first_line(record.get("error"), record.get("stderr"))
            return f"the evaluator exited {record.get('exit_code')}: {why}"
    return None


#: ``resources`` flags of a run, and what each says when the reference hits it.
LIMITS = {
    "oom_killed": "a command was killed at the memory limit",
    "timed_out": "a command timed out",
    "deadline_exceeded": "the sandbox's wall deadline ended the run",
    "output_truncated": "a command's output was cut at the output cap",
}


def limits_hit(result: RunResult) -> list[str]:
    """The limits this run hit (``resources`` flags), in words."""
    resources = result.resources or {}
    hit = [text for flag, text in LIMITS.items() if resources.get(flag)]
    if resources.get("captures_truncated"):
        hit.append("a captured file was cut at its cap")
    return hit


def seconds(result: RunResult) -> float | None:
    """The run's total time in the worker, in seconds."""
    total = result.timings_ms.get("total")
    return None if total is None else total / 1000
