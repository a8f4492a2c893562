"""The forgery battery through the whole fleet, on every runtime (issue 21).

Each forgery of ``tasks.checking.forgeries.battery`` implements nothing and tries to win
the example pack ``fizzbuzz-coding`` anyway. Written as a clean-room pack (deliverables, a
probe instead of an import, a JUnit report as the verdict), the pack resists every one of
them. Each forgery that aims at a pack's tests wins a pack written to be forged
(:mod:`forgeable`): the battery is not empty words; those aiming at the fleet name the
tests of the defence they probe.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from pathlib import Path
from typing import Any

import pytest
import yaml
from fleet_support import PrivateFleet, new_id
from forgeable import (
    EXAMPLE,
    FLEET_AIMED,
    IMPORTING_WINNERS,
    REFERENCE,
    WORKSPACE_WINNERS,
    example,
    importing_pack,
    workspace_pack,
)

from evalfleet.scoring import load_pack
from evalfleet.tasks.checking.forgeries.battery import FORGERIES, battery, refused, wins
from evalfleet.tasks.checking.leaks import leaked
from evalfleet.tasks.checking.readings import files_refused
from evalfleet.tasks.messages import RunRequest, RunResult, Submission

PACK = EXAMPLE / "pack.yaml"
#: The forgeries that won the example pack before it was rewritten (the issue's table).
KNOWN_WINNERS = {"pytest hook", "shadowed runner", "config plugin", "exit on import"}


def clean_room_pack() -> dict[str, Any]:
    return example()


def forge(private_fleet: PrivateFleet, runtime: str, mapping: dict[str, Any],
          names: Collection[str] = ()) -> dict[str, RunResult]:
    """Every forgery of the battery (or those ``names``) against ``mapping`` and its first
    case, through a fleet on ``runtime``."""
    private_fleet.start("forger", ["-c", "2"],
                        profiles=json.dumps({"default": {"runtime": runtime}}))
    client = private_fleet.client()
    pack = load_pack(mapping)
    forgeries = [f for f in battery(pack, REFERENCE, pack.cases[0]) if not names or f.name in names]
    requests = {f.name: RunRequest(run_id=new_id("forgery"), pack=mapping,
                                   submission=f.submission) for f in forgeries}
    client.submit_many(requests.values())
    return {name: client.wait(r.run_id, timeout=240) for name, r in requests.items()}


def test_the_example_pack_resists_every_forgery(private_fleet: PrivateFleet,
                                                runtime: str) -> None:
    """Every forgery is scored, as a loss, with no code_execution validator passing, or
    refused at the intake for what its submission holds (the grader's own events); none
    turns its loss into an infra error or "no result". The shapes the sandbox cannot seed
    are scored before any sandbox starts; no shape may end otherwise than lost."""
    results = forge(private_fleet, runtime, clean_room_pack())
    pack = load_pack(clean_room_pack())
    forgeries = {f.name: f for f in battery(pack, REFERENCE, pack.cases[0])}
    assert list(results) == list(forgeries)
    assert [n for n, r in results.items() if refused(r)] == ["grader events"]
    for name, result in results.items():
        assert result.outcome == "scored" or refused(result), (name, result.reason)
        assert refused(result) or files_refused(result) or (
            result.resources["runtime"] == runtime), name
        assert not wins(result, must_lose=forgeries[name].must_lose), (
            name, result.scorecard and result.scorecard.overall_reason)
        assert not leaked(clean_room_pack()["version"]["sandbox"]["test_files"], result), name


def test_every_forgery_aimed_at_tests_wins_a_pack_written_to_be_forged(
        private_fleet: PrivateFleet, runtime: str) -> None:
    """Tests next to the candidate's files, importing its module, verdicts from output and
    exit codes: each forgery that aims at such tests wins (a forgery that wins nothing
    there tests nothing), and the deliverable the tests import prints them into the
    result. An empty deliverable with planted directories still loses (the control)."""
    results = forge(private_fleet, runtime, workspace_pack(),
                    {*WORKSPACE_WINNERS, "test leak", "blocked seeding"})
    winners = {name for name, result in results.items() if wins(result)}
    assert winners == WORKSPACE_WINNERS, winners
    assert winners >= KNOWN_WINNERS
    test_files = workspace_pack()["version"]["sandbox"]["test_files"]
    assert leaked(test_files, results["test leak"]), results["test leak"].scorecard


def test_a_clean_room_pack_that_imports_its_deliverable_can_still_be_forged(
        private_fleet: PrivateFleet, runtime: str) -> None:
    """The clean room, but the tests import the deliverable (declared), ask only the
    visible input, and a probe lets the candidate's user site in: the always-equal value,
    the plugin registered at import, the patched framework, the memorizer and the start-up
    hooks in the probe each win; the imported deliverable prints the hidden tests into the
    result. The reference wins it honestly: the declared import finds the judge's copy."""
    results = forge(private_fleet, runtime, importing_pack(),
                    {*IMPORTING_WINNERS, "test leak", "blocked seeding"})
    winners = {name for name, result in results.items() if wins(result)}
    assert winners == IMPORTING_WINNERS, winners
    test_files = importing_pack()["version"]["sandbox"]["test_files"]
    assert "test_fizzbuzz.py" in leaked(test_files, results["test leak"])
    undeclared = importing_pack()
    undeclared["version"]["sandbox"].pop("imports_deliverables")
    declared, plain = (honest(private_fleet, pack) for pack in (importing_pack(), undeclared))
    assert passed(declared) == {"tests": "pass", "probe": "pass"}, declared.scorecard
    # undeclared, the deliverables are data: an import of them finds nothing
    assert passed(plain) == {"tests": "fail", "probe": "pass"}, plain.scorecard


def honest(private_fleet: PrivateFleet, mapping: dict[str, Any]) -> RunResult:
    """The reference's result on ``mapping``, through the fleet already started."""
    client = private_fleet.client()
    request = RunRequest(run_id=new_id("honest"), pack=mapping, submission=REFERENCE)
    client.submit(request)
    return client.wait(request.run_id, timeout=240)


def passed(result: RunResult) -> dict[str, str]:
    """The verdict of each ``code_execution`` validator of ``result``."""
    assert result.scorecard is not None, result.reason
    return {v.key: v.verdict for v in result.scorecard.validator_details
            if v.type == "code_execution"}


def test_every_forgery_is_proven_or_aims_at_the_fleet() -> None:
    """A forgery added to the battery needs a fixture it wins, or (aimed at the fleet, which
    no pack can open) a test of the defence it probes."""
    root = Path(__file__).parents[2]
    proven = WORKSPACE_WINNERS | IMPORTING_WINNERS | {"test leak"}
    assert set(FORGERIES) == proven | set(FLEET_AIMED)
    assert not proven & set(FLEET_AIMED)
    assert all((root / path).is_file() for path in FLEET_AIMED.values())


#: Every example pack meets the whole battery in ``evalfleet check``'s forgery section
#: (tests/integration/check/test_check.py, every case, on the default runtime).
EXAMPLES = Path(__file__).parents[2] / "examples" / "packs"


@pytest.mark.parametrize("name", ["fizzbuzz-coding", "cipher-forge-lite"])
def test_running_out_the_clock_is_a_loss(private_fleet: PrivateFleet, runtime: str,
                                         name: str) -> None:
    """A submission that holds its sandbox past the run's wall deadline (its command's
    own timeout set past it) loses: its tests timed out, its evaluator never ran, and
    neither is booked as the fleet's or the pack's error, which would void the run (no
    result instead of a loss)."""
    mapping = yaml.safe_load((EXAMPLES / name / "pack.yaml").read_text())
    forgery = next(f for f in battery(load_pack(mapping)) if f.name == "grader events")
    submission = Submission(files=forgery.submission.files,
                            commands=[{"run": "sleep 600", "timeout_ms": 900_000}])
    private_fleet.start("forger", ["-c", "1"],
                        profiles=json.dumps({"default": {"runtime": runtime}}))
    client = private_fleet.client()
    request = RunRequest(run_id=new_id("clock"), pack=mapping, submission=submission,
                         time_limit_ms=4000)
    client.submit(request)
    result = client.wait(request.run_id, timeout=240)
    assert result.outcome == "scored", result.reason
    assert result.resources["deadline_exceeded"] is True
    assert not wins(result), result.scorecard and result.scorecard.overall_reason
