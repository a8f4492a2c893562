"""Chaos soak: runs stream in while pool processes and whole nodes are SIGKILLed, Redis is
restarted, the engine socket is cut and a worker is partitioned, at random — every run gets
exactly one result, none is scored against the candidate, no container is left.

Two minutes in the default lane (faults are dealt in rounds, every kind once per round, so
two minutes meet each kind about twice); ``bash scripts/chaos.sh`` runs the same for 30 minutes
(``EVALFLEET_CHAOS_DURATION_S``) with longer partitions (4-40 s,
``EVALFLEET_CHAOS_PARTITION_S=4,40``). ``EVALFLEET_CHAOS_SEED`` replays a fault schedule
(the seed is in the report and the fault log); ``EVALFLEET_CHAOS_REPORT=path.json`` keeps
the report. The driver is chaos.py.
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path
from typing import Any

import pytest
from chaos import KINDS, Chaos, ChaosSettings
from fleet_support import Host, PrivateFleet, SocketProxy


def chaos_soak(fleet: PrivateFleet, proxy: SocketProxy, host: Host, tmp_path: Path,
               duration_s: float, partition_s: tuple[float, float]) -> dict[str, Any]:
    """The soak and its assertions: no run lost (``lost_in_take`` names those lost before
    any delivery was counted — kombu's take-then-record hole, closed by tasks/broker)."""
    seed = int(os.environ.get("EVALFLEET_CHAOS_SEED") or random.SystemRandom().getrandbits(32))
    kinds = tuple(os.environ.get("EVALFLEET_CHAOS_KINDS", ",".join(KINDS)).split(","))
    settings = ChaosSettings(duration_s=duration_s, seed=seed, kinds=kinds,
                             partition_s=partition_s)
    report = Chaos(fleet, proxy, host, settings, tmp_path / "chaos-faults.jsonl").run()
    text = json.dumps(report, indent=2)
    print(text)
    if os.environ.get("EVALFLEET_CHAOS_REPORT"):
        Path(os.environ["EVALFLEET_CHAOS_REPORT"]).write_text(text)

    assert report["runs"] > 0 and report["faults"] and not report["stream_error"], text
    assert report["lost"] == {}, text
    assert report["duplicates"] == [], text
    assert report["not_streamed"] == [], text
    assert report["against_the_candidate"] == [], text
    assert set(report["outcomes"]) <= {"scored:win", "infra_error", "internal_error"}, text
    assert report["leaked_containers"] == [], text
    return report


@pytest.mark.slow  # CI runs it after the README test command (scripts/ci-soak.sh)
@pytest.mark.timeout(1500)
def test_chaos_soak_2_minutes(private_fleet: PrivateFleet, engine_proxy: SocketProxy,
                              worker_host: Host, tmp_path: Path) -> None:
    """The CI chaos soak (``bash scripts/ci-soak.sh``, which ``.ci/run`` runs after the
    README test command): 2 minutes of runs and faults, partitions of 3-8 s; every kind of
    fault is met (the report's ``faults`` counts them by kind)."""
    report = chaos_soak(private_fleet, engine_proxy, worker_host, tmp_path, 120, (3.0, 8.0))
    assert set(report["faults"]) >= set(KINDS), report["faults"]


@pytest.mark.slow
@pytest.mark.timeout(7200)
def test_chaos_soak_by_hand(private_fleet: PrivateFleet, engine_proxy: SocketProxy,
                            worker_host: Host, tmp_path: Path) -> None:
    """The long chaos soak (``bash scripts/chaos.sh``): 30 minutes unless
    ``EVALFLEET_CHAOS_DURATION_S`` says otherwise."""
    duration = float(os.environ.get("EVALFLEET_CHAOS_DURATION_S") or 1800)
    low, high = (os.environ.get("EVALFLEET_CHAOS_PARTITION_S") or "4,40").split(",")
    chaos_soak(private_fleet, engine_proxy, worker_host, tmp_path, duration,
               (float(low), float(high)))
