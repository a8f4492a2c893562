"""Which OCI runtime isolates each profile's sandboxes, decided once at worker start.

A profile's ``runtime`` (``EVALFLEET_PROFILES__<NAME>__RUNTIME``) is ``auto`` (the
default), or the name of a runtime the engine lists (``runsc``, ``runc``, ...):

* ``auto`` is gVisor whenever the engine has it (a runtime whose binary is ``runsc``;
  ``runsc`` itself first), else runc, and the worker says so once, loudly: a log line,
  the ``fallback`` label of ``evalfleet_sandbox_isolation_info`` and ``evalfleet health``;
* a named runtime the engine does not list is an error at start, not a failed run;
* a profile that allows network cannot run on a gVisor runtime registered with
  ``--network=none`` (``scripts/setup.sh`` registers ``runsc`` so): pinned, that is an
  error at start; on ``auto`` such a profile falls back to runc (loudly, as above) unless
  the engine has a gVisor runtime registered without it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from evalfleet.sandbox.docker.runtimes import RUNC, RuntimeInfo

if TYPE_CHECKING:
    from .settings import ProfileSettings, Settings

log = logging.getLogger(__name__)

#: A profile's runtime when the operator pins none: the strongest the engine offers.
AUTO = "auto"
#: The runtime ``auto`` prefers among gVisor ones.
PREFERRED = "runsc"


class IsolationError(ValueError):
    """A profile asks for a runtime this engine cannot give it."""


@dataclass(frozen=True)
class Isolation:
    """What one profile's sandboxes run on."""

    profile: str
    runtime: str
    gvisor: bool
    fallback: str = ""
    """Why ``auto`` could not use gVisor (``""`` when it did, or the runtime was pinned)."""

    def describe(self) -> str:
        """One line for logs and ``evalfleet health``."""
        kernel = "gVisor" if self.gvisor else "the host's kernel"
        line = f"profile {self.profile}: runtime {self.runtime} ({kernel})"
        return f"{line}; NOT gVisor: {self.fallback}" if self.fallback else line


def choose(name: str, wanted: str, allow_network: bool,
           runtimes: Mapping[str, RuntimeInfo]) -> Isolation:
    """The isolation of profile ``name`` asking for runtime ``wanted`` on this engine.

    Raises:
        IsolationError: the runtime is not offered, or cannot serve a network profile.
    """
    if wanted == AUTO:
        return _auto(name, allow_network, runtimes)
    found = runtimes.get(wanted)
    if found is None:
        offered = ", ".join(sorted(runtimes)) or "none"
        raise IsolationError(f"profile {name!r}: runtime {wanted!r} is not one the Docker "
                             f"engine offers (it lists: {offered})")
    if allow_network and found.gvisor and found.networkless:
        raise IsolationError(
            f"profile {name!r} allows network, but runtime {wanted!r} is gVisor registered "
            f"with --network=none: pin runc for it, or register a gVisor runtime without "
            f"that flag (docs/operations.md)")
    return Isolation(name, wanted, found.gvisor)


def _auto(name: str, allow_network: bool, runtimes: Mapping[str, RuntimeInfo]) -> Isolation:
    gvisor = [r for r in runtimes.values() if r.gvisor]
    usable = [r for r in gvisor if not (allow_network and r.networkless)]
    if usable:
        best = min(usable, key=lambda r: (r.name != PREFERRED, r.name))
        return Isolation(name, best.name, True)
    why = ("the engine's gVisor runtime runs without network (--network=none) and this "
           "profile allows network" if gvisor else
           "the Docker engine offers no gVisor runtime (install runsc and register it: "
           "docs/operations.md)")
    return Isolation(name, RUNC, False, fallback=why)


def resolve(profiles: Mapping[str, ProfileSettings], names: Iterable[str],
            runtimes: Mapping[str, RuntimeInfo]) -> list[Isolation]:
    """The isolation of each profile in ``names`` (the ones this process will run).

    Raises:
        IsolationError: a profile asks for what the engine cannot give (all listed).
    """
    found, problems = [], []
    for name in names:
        profile = profiles[name]
        try:
            found.append(choose(name, profile.runtime, profile.allow_network, runtimes))
        except IsolationError as error:
            problems.append(str(error))
    if problems:
        raise IsolationError("; ".join(problems))
    return found


def apply(settings: Settings, isolations: Iterable[Isolation]) -> list[Isolation]:
    """Pin each resolved runtime in ``settings`` (so every pool process uses the same) and
    say, once and loudly, where gVisor is not used; returns the isolations."""
    chosen = list(isolations)
    for isolation in chosen:
        settings.profiles[isolation.profile].runtime = isolation.runtime
        if isolation.fallback:
            log.warning("SANDBOX ISOLATION DEGRADED: %s", isolation.describe())
        else:
            log.info("sandbox isolation: %s", isolation.describe())
    return chosen


def served(settings: Settings) -> list[str]:
    """The profiles whose queues this worker consumes (those it must be able to run)."""
    return [name for name in settings.queues if name in settings.profiles]
