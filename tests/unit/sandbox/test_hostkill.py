"""Host-side stopping signals only the candidate's uid, and only pids of the container."""

from __future__ import annotations

import os
from typing import Any

from evalfleet.sandbox.docker.hostkill import host_kill


class Container:
    """A stand-in whose ``top`` lists the given rows."""

    def __init__(self, rows: list[list[str]], container_id: str) -> None:
        self.rows, self.id = rows, container_id

    def top(self, ps_args: str = "") -> dict[str, Any]:
        return {"Titles": ["PID", "UID"], "Processes": self.rows}


def test_a_pid_outside_the_container_is_never_signalled() -> None:
    """This very test process is listed with the right uid, but its cgroup is not the
    container's: it must survive (host_kill reports no hit)."""
    me = [str(os.getpid()), str(os.getuid())]

    assert host_kill(Container([me], "f" * 64), f"{os.getuid()}:{os.getgid()}") == 0


def test_other_uids_and_junk_rows_are_skipped() -> None:
    """Rows of another uid, or that are not pid/uid pairs, are ignored."""
    rows = [["1", "0"], ["abc", "1000"], ["7"]]

    assert host_kill(Container(rows, "f" * 64), "1000:1000") == 0
