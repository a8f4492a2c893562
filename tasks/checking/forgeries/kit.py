"""What every forgery of the battery is made of (:mod:`.battery`): the names it aims
at in a pack, the hostile submission, and the helpers that build one."""

from __future__ import annotations

import posixpath
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ...messages import Submission

#: Every forged deliverable: any name imported from it exists and does nothing (a module
#: ``__getattr__``), so the tests get as far as running and fail, as a wrong answer would.
NOTHING = "def __getattr__(name):\n    return lambda *args, **kwargs: []\n"
PASS_LINE = "3 passed in 0.01s"


@dataclass(frozen=True)
class Target:
    """The names a forgery aims at."""

    deliverables: tuple[str, ...]
    test_files: tuple[str, ...]
    answers: tuple[str, ...] = ()
    """The files a custom-script evaluator reads (the ``required_files`` of its checks)."""
    scores: tuple[str, ...] = ()
    """The keys of the evaluator's ``scores`` the scorecard takes."""
    tests: tuple[str, ...] = ()
    """The keys of the pack's ``code_execution`` validators."""
    listings: tuple[str, ...] = ()
    """The directories of the pack's ``directory_listing`` checks, as declared (absolute, or
    relative to the workspace, where the candidate's commands start)."""
    reference: tuple[tuple[str, str], ...] = ()
    """The reference submission's text deliverables, ``(path, text)`` (empty when the battery
    is built without a reference): :mod:`tasks.checking.forgeries.memory` loads them."""
    visible: tuple[str, ...] = ()
    """Every scalar of the case the agent sees (its payload and inputs), as text."""

    @property
    def module(self) -> str:
        """The first Python deliverable's module name ("" when there is none)."""
        for path in self.deliverables:
            if path.endswith(".py"):
                return posixpath.basename(path)[:-3]
        return ""


@dataclass(frozen=True)
class Forgery:
    """One hostile submission and what it tries."""

    name: str
    tries: str
    submission: Submission
    must_lose: bool = False
    """Whether anything but a scored loss wins, a refusal included: a shape whose void the
    candidate could choose (:mod:`.shapes`)."""
    means: str = ""
    """What its win tells the pack's author, where its name does not say it."""


#: Builds a forgery against a pack's names; ``None`` when the pack gives it nothing to aim
#: at (:mod:`tasks.checking.forgeries.memory` without a reference).
Builder = Callable[[Target], Forgery | None]


def relative(path: str) -> str:
    return path.removeprefix("/workspace/").lstrip("/")


def planted(aim: Target, deliverable: str = NOTHING, **extra: str) -> dict[str, Any]:
    """The deliverables (each ``deliverable``), plus ``extra`` files."""
    return {**{path: deliverable for path in aim.deliverables}, **extra}


def answered(aim: Target, **extra: str) -> dict[str, Any]:
    """:func:`_files`, plus an empty answer at each path an evaluator's checks require
    (so that the checks pass and the evaluator's verdict decides)."""
    return planted(aim, **dict.fromkeys(aim.answers, "{}"), **extra)


def submission(files: dict[str, Any], *commands: str) -> Submission:
    return Submission(files=files, commands=[{"run": c, "timeout_ms": 10_000}
                                             for c in commands or ("true",)])
