"""A reaper pass removes what it found several at a time (the engine-backed behaviour is in
tests/integration/sandbox/test_reaper.py): a lost node's gVisor sandboxes, each slow to go
under load, are not removed one minute after another."""

from __future__ import annotations

import threading
from typing import Any

from evalfleet.sandbox.docker import reaper
from evalfleet.sandbox.docker.labels import LABEL_DEADLINE, LABEL_WORKER
from evalfleet.sandbox.docker.reaper import Reaper


class SlowContainer:
    """A listed container whose removal waits until ``together`` removals are under way."""

    def __init__(self, number: int, labels: dict[str, str], together: threading.Barrier):
        self.id, self.attrs, self.together = f"c{number}", {"Labels": labels}, together
        self.removed = False

    def remove(self, force: bool) -> None:
        self.together.wait(timeout=10)  # one at a time: the barrier breaks, the test fails
        self.removed = force


class Engine:
    def __init__(self, listed: list[SlowContainer]) -> None:
        self.containers = self
        self.listed = listed

    def list(self, **_: Any) -> list[SlowContainer]:
        return self.listed


def test_a_pass_removes_a_lost_nodes_sandboxes_at_once() -> None:
    together = threading.Barrier(reaper.REMOVALS_AT_ONCE)
    lost = [SlowContainer(n, {LABEL_WORKER: "lost-node", LABEL_DEADLINE: "9e99"}, together)
            for n in range(reaper.REMOVALS_AT_ONCE)]
    live = SlowContainer(99, {LABEL_WORKER: "live-node", LABEL_DEADLINE: "9e99"}, together)

    found = Reaper(Engine([*lost, live]), is_alive=lambda worker: worker == "live-node",
                   clock=lambda: 0.0).reap_once()

    assert found.orphaned == tuple(c.id for c in lost) and found.spared == 1
    assert all(c.removed for c in lost) and not live.removed
