"""What a pack's environment must provide, asked of the sandbox before anything is seeded
(:mod:`sandbox.envprobe`).

Only what the pack and the profile own is asked: the workspace, room for the pack's own
files, and the tools the pack's own commands name — its setup commands, its test commands
(``code_execution``), its probes and its evaluator's interpreter. Never the submission's
commands: what they need is the candidate's business.

A command's tool is its program: the first word of a shell string after any leading
``VAR=value`` assignments, or an argv's first element. Only a plain name (looked up on the
``PATH``) or an absolute path outside what is seeded later (the workspace, ``/tmp``, the
judge's room) is asked for; a word the probe cannot judge without running the shell —
``$PYTHON``, ``./run.sh``, ``(cd x``, a reserved word — is left to the command itself.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Mapping, Sequence

from evalfleet.sandbox import room
from evalfleet.sandbox.command import Command
from evalfleet.sandbox.envprobe import EnvironmentProbe
from evalfleet.sandbox.evaluator import INTERPRETERS, EvaluatorRun
from evalfleet.sandbox.execution import CodeExecution
from evalfleet.sandbox.paths import is_under

#: Shell reserved words (POSIX): never a program.
RESERVED = frozenset({"!", "{", "}", "case", "do", "done", "elif", "else", "esac", "fi", "for",
                      "if", "in", "then", "until", "while"})
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+-]*")
_ABSOLUTE = re.compile(r"/[A-Za-z0-9_.+/-]+")
#: Where nothing is before seeding: a tool there is the pack's or the candidate's file.
SEEDED_LATER = ("/tmp", room.ROOM)


def program_of(run: str | Sequence[str], workspace: str) -> str | None:
    """The tool a command names, or ``None`` when there is none the probe can look for."""
    if isinstance(run, str):
        try:
            words = shlex.split(run)
        except ValueError:  # unbalanced quotes: the shell will say so itself
            return None
        while words and _ASSIGNMENT.match(words[0]):
            words = words[1:]
    else:
        words = list(run)
    if not words or words[0] in RESERVED:
        return None
    word = words[0]
    if _NAME.fullmatch(word):
        return word
    later = (workspace, *SEEDED_LATER)
    if _ABSOLUTE.fullmatch(word) and not any(is_under(word, where) for where in later):
        return word
    return None


def probes(*, setup: Sequence[Command], tests: Iterable[CodeExecution],
           probes: Iterable[Command], evaluator: EvaluatorRun | None,
           env: Mapping[str, str], workspace: str,
           needed_bytes: int) -> tuple[EnvironmentProbe, EnvironmentProbe | None]:
    """The probes of a run: before anything is seeded, the workspace, the space the pack's
    own files need and the tools its setup commands name; then, after the setup commands
    (what they install counts), the tools its tests, probes and evaluator name. Without
    setup commands, one probe asks for everything."""
    runs: list[str | Sequence[str]] = [c.argv for c in probes]
    runs += [test.test_command for test in tests]
    if evaluator is not None:
        runs.append([INTERPRETERS.get(evaluator.runtime, "sh")])
    later = tools_of(runs, workspace)
    first = tools_of([c.argv for c in setup], workspace)
    if not setup:
        first, later = later, ()
    before = EnvironmentProbe(tools=first, free_bytes=needed_bytes, env=dict(env))
    after = EnvironmentProbe(tools=later, env=dict(env)) if later else None
    return before, after


def tools_of(runs: Iterable[str | Sequence[str]], workspace: str) -> tuple[str, ...]:
    """The distinct tools the commands name, in order."""
    tools = (program_of(run, workspace) for run in runs)
    return tuple(dict.fromkeys(t for t in tools if t))
