"""A cancelled gVisor sandbox is not asked why it died (:meth:`Conduit.died_of_memory`): the
engine's answer for a death not of memory waits out its ``oom`` event window (5 s), and the
cancelled sandbox's removal waited behind it (issue 41, item 7: ``bench/cancel.py``)."""

from __future__ import annotations

from typing import Any

import pytest

from evalfleet.sandbox.docker import conduit as conduit_module
from evalfleet.sandbox.docker.conduit import CANCELLED, Conduit
from evalfleet.sandbox.profile import Profile


class Container:
    id = "c0ffee"

    def __init__(self) -> None:
        self.killed = 0

    def kill(self) -> None:
        self.killed += 1


@pytest.fixture
def asked(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every question put to the engine's records (answered: it died of memory)."""
    found: list[Any] = []

    def died_of_memory(client: Any, container: Any) -> bool:
        found.append(container)
        return True

    monkeypatch.setattr(conduit_module.death, "died_of_memory", died_of_memory)
    return found


def gvisor_conduit() -> Conduit:
    return Conduit(object(), Container(), Profile(name="p", image="i"), gvisor=True)


def test_a_cancelled_sandbox_is_not_asked_why_it_died(asked: list[Any]) -> None:
    """Once ended by a cancel, its death is the cancel's: no question, no wait."""
    conduit = gvisor_conduit()
    conduit.end(CANCELLED)

    assert (conduit.died_of_memory(), conduit.ended_by, asked) == (False, CANCELLED, [])
    assert conduit.container.killed == 1  # type: ignore[attr-defined]


def test_a_sandbox_not_cancelled_is_still_asked(asked: list[Any]) -> None:
    """A gVisor sandbox that died by itself is still read for an OOM kill."""
    conduit = gvisor_conduit()

    assert (conduit.died_of_memory(), conduit.ended_by, len(asked)) == (True, "memory", 1)
    conduit.end(CANCELLED)  # stops the wall timer
