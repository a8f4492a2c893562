"""Whether each profile that asks to reuse its sandboxes may, checked once at worker start.

A profile with ``reuse_runs`` > 1 reuses a sandbox only after a reset its supervisor has
verified (:mod:`sandbox.docker.reuse`). Some engines or images cannot give that: an image
whose supervisor predates the reset, a runtime where the reset can never be verified. The
worker finds out before it takes a run, with one probe sandbox per such profile, and where
the probe fails it says so once, loudly — a log line, ``evalfleet_sandbox_reuse_info``
(``verified="false"``) and ``evalfleet health`` — and gives that profile a fresh sandbox
per run (``reuse_runs`` 1), as if reuse had never been asked for.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .settings import Settings

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ReuseCheck:
    """What the start-up probe found for one profile."""

    profile: str
    runs: int
    """The runs per sandbox the profile asked for."""
    problem: str = ""
    """Why its resets do not verify here (``""``: they do)."""

    @property
    def verified(self) -> bool:
        return not self.problem

    def describe(self) -> str:
        """One line for logs and ``evalfleet health``."""
        if self.verified:
            return f"profile {self.profile}: up to {self.runs} runs per sandbox (reset verified)"
        return (f"profile {self.profile}: a fresh sandbox per run, NOT the {self.runs} "
                f"asked for: {self.problem}")


def check(settings: Settings, names: Iterable[str], factory: Any) -> list[ReuseCheck]:
    """Probe each profile of ``names`` that asks for reuse (``factory``: a
    :class:`~sandbox.docker.factory.DockerFactory` on the worker's engine)."""
    from evalfleet.sandbox.docker.reuse import probe
    from evalfleet.sandbox.errors import SandboxError

    found = []
    for name in names:
        wanted = settings.profiles[name]
        if wanted.reuse_runs <= 1:
            continue
        try:
            problem = probe(factory, wanted.bounds(name).profile)
        except SandboxError as error:
            problem = f"the probe sandbox could not run: {error}"
        found.append(ReuseCheck(name, wanted.reuse_runs, problem))
    return found


def apply(settings: Settings, checks: Iterable[ReuseCheck]) -> list[ReuseCheck]:
    """Turn reuse off for each profile whose resets did not verify, and say so."""
    done = list(checks)
    for found in done:
        if found.verified:
            log.info("sandbox reuse: %s", found.describe())
        else:
            log.warning("SANDBOX REUSE OFF: %s", found.describe())
            settings.profiles[found.profile].reuse_runs = 1
    return done
