"""A tree the candidate shapes cannot make evalfleet's own steps over it outlive their
bounds (issue 38 item 2), in a real sandbox on each runtime. Deep trees (3,000 levels of
255-byte names: every path past ``PATH_MAX``, a listing's output quadratic in the depth),
wide ones and locked ones (directories of mode 000, hiding what is below them) end as the
candidate's loss, with a reason naming the bound: the listing stops at its depth and says
what it left out, the evaluator's preparation counts the tree before walking it and is
withheld past ``tree_entries`` or ``tree_depth``, the deliverables' export and the reuse
reset stop at theirs. Never ``infra_error`` (the supervisor channel out of step), never
the pack's error ("could not run": no contest)."""

from __future__ import annotations

import copy
import uuid
from typing import Any

import pytest
from sandbox_support import IMAGES, TEST_LABELS, WORKER, evaluated_pack, left_over, profile

from evalfleet.sandbox.command import Command
from evalfleet.sandbox.docker.factory import DockerFactory
from evalfleet.sandbox.docker.pool import WarmPool
from evalfleet.sandbox.profile import Limits, Profile
from evalfleet.tasks.evaluation.pipeline import PipelineConfig, ProfileBounds, run_pipeline

pytestmark = pytest.mark.integration


def shape(name: str, levels: int) -> str:
    """A command that builds ``name`` in the current directory: ``deep`` (``levels``
    nested directories of 255-byte names), ``nested`` (of 1-byte names), ``wide``
    (``levels`` empty files in one directory) or ``locked`` (``levels`` nested
    directories, each with a file, then each made mode 000, deepest first)."""
    body = {
        "deep": "for _ in range(n): os.mkdir('d' * 255); os.chdir('d' * 255)",
        "nested": "for _ in range(n): os.mkdir('d'); os.chdir('d')",
        "wide": "os.mkdir('w')\nfor i in range(n): open(f'w/{i:06}', 'w').close()",
        "locked": ("for i in range(n): os.mkdir('l'); open(f'l/f{i}', 'w').close(); "
                   "os.chdir('l')\nfor k in range(n, 0, -1): os.chmod(start + '/l' * k, 0)"),
    }[name]
    return f'python3 -c "import os\nstart, n = os.getcwd(), {levels}\n{body}"'


LISTING: dict[str, Any] = {
    "pack": {"slug": "trees-listing"},
    "version": {"sandbox": {}, "evaluation_spec": {
        "name": "trees-listing", "version_number": 1, "judge_mode": "deterministic",
        "post_execution_checks": [{"key": "tree", "type": "directory_listing", "path": "."}],
        "validators": [{"key": "clean", "type": "directory_structure", "target": "file:tree",
                        "config": {"forbidden_files": ["secret.txt"]}}],
        "scorecard": {"dimensions": ["correctness"]}}},
}
ABSENT = "forbidden files cannot be shown absent from "

EVALUATED = evaluated_pack("trees-evaluated", (
    "import json, os\n"
    "answer = open(os.path.join(os.environ['SUBMISSION_DIR'], 'answer.txt')).read()\n"
    "print(json.dumps({'scores': {'correctness': 1000 * (answer.strip() == '42')}}))\n"))

DELIVERED: dict[str, Any] = {
    "pack": {"slug": "trees-delivered"},
    "version": {"sandbox": {"deliverables": ["out"]}, "evaluation_spec": {
        "name": "trees-delivered", "version_number": 1, "judge_mode": "deterministic",
        "validators": [{"key": "tests", "type": "code_execution", "target": "file:out",
                        "config": {"test_command": "test -s $DELIVERABLES/out/answer.txt"
                                                   " && echo '1 passed'"}}],
        "post_execution_checks": [{"key": "out", "type": "file_capture",
                                   "path": "out/answer.txt"}],
        "scorecard": {"dimensions": ["correctness"]}}},
}


def run(factory: DockerFactory, runtime: str, pack: dict[str, Any], command: str,
        **limits: Any) -> Any:
    """The pipeline's result for a submission that answers 42 and runs ``command``."""
    body = {"run_id": f"trees-{uuid.uuid4().hex[:12]}", "pack": copy.deepcopy(pack),
            "submission": {"files": {"answer.txt": "42\n"},
                           "commands": [{"run": command, "timeout_ms": 120_000}]}}
    config = PipelineConfig(profiles={"default": ProfileBounds(
        profile("python", runtime, **limits))})
    result = run_pipeline(body, factory, config)
    assert result.outcome == "scored" and result.scorecard is not None, result.reason
    return result


@pytest.mark.parametrize(("command", "reason"), [
    ("true", ""),
    (shape("deep", 3000), ABSENT + "a listing that left out 34 entries (their lines were "
                                   "over 8 KiB): secret.txt"),
    (shape("nested", 3000), ABSENT + "a listing that failed (entries deeper than 64 levels "
                                     "are not listed): secret.txt"),
    (shape("locked", 3), ABSENT + "a listing that failed (1 directory could not be read): "
                                  "secret.txt"),
], ids=["plain", "deep", "nested", "locked"])
@pytest.mark.parametrize("transport", ["supervisor", "exec"])
def test_a_listing_stops_at_its_bounds_and_says_so(
        factory: DockerFactory, exec_factory: DockerFactory, runtime: str,
        docker_client: Any, transport: str, command: str, reason: str) -> None:
    """The listing goes ``tree_depth`` levels down and cuts each line in the sandbox: a
    tree 3,000 levels deep lists in one bounded request (it took the channel out of step:
    ``infra_error``); deeper entries, and directories it cannot read, are named as what
    it left out, and ``forbidden_files`` fails on them."""
    result = run(exec_factory if transport == "exec" else factory, runtime, LISTING, command)
    clean = result.scorecard.validator_details[0]
    assert (clean.verdict, clean.reason) == ("pass" if not reason else "fail", reason)
    listed = next(e for e in result.events
                  if e["type"] == "grader.verification.directory_listed")
    assert listed["payload"].get("truncated", False) == bool(reason), listed["payload"]
    assert left_over(docker_client, result.run_id) == []


@pytest.mark.parametrize(("command", "limits", "why"), [
    ("true", {}, ""),
    (shape("deep", 3000), {}, "the workspace is deeper than 64 levels"),
    (shape("wide", 600), {"tree_entries": 500}, "the workspace holds more than 500 entries"),
    (shape("locked", 60), {"tree_entries": 100},
     "the workspace holds more than 100 entries"),
], ids=["plain", "deep", "wide", "locked"])
@pytest.mark.parametrize("transport", ["supervisor", "exec"])
def test_the_evaluator_is_withheld_from_a_tree_past_its_bounds(
        factory: DockerFactory, exec_factory: DockerFactory, runtime: str,
        docker_client: Any, transport: str, command: str, limits: dict[str, Any],
        why: str) -> None:
    """The preparation counts the workspace first (as the candidate, opening its own
    locked directories: what they hid counts too), no further than its bounds: past
    them the evaluator is withheld, a loss with the bound named. (Walked as the judge, a
    deep tree timed the preparation out, and the pack was blamed: no contest.)"""
    result = run(exec_factory if transport == "exec" else factory, runtime, EVALUATED,
                 command, **limits)
    (evaluated,) = [e["payload"] for e in result.events
                    if e["type"] == "grader.evaluator.completed"]
    card = result.scorecard
    if not why:
        assert (card.result, evaluated["exit_code"]) == ("win", 0), evaluated
        return
    assert evaluated["stderr"] == f"[evalfleet] the evaluator did not run: {why}", evaluated
    assert not evaluated.get("error") and (card.result, card.score) == ("loss", 0)
    assert left_over(docker_client, result.run_id) == []


@pytest.mark.parametrize("command", [
    "mkdir -p out && echo 42 > out/answer.txt",
    f"mkdir -p out && cd out && {shape('deep', 3000)}",
    f"mkdir -p out && cd out && {shape('locked', 50)}",
], ids=["plain", "deep", "locked"])
def test_a_deliverable_tree_is_exported_within_its_bounds(
        factory: DockerFactory, runtime: str, docker_client: Any, command: str) -> None:
    """The deliverables' export stops at its cap, silently about what it cannot read: a
    deep or locked tree where the answer should be is the candidate's loss, never the
    fleet's failure."""
    result = run(factory, runtime, DELIVERED, command)
    plain = command.endswith("answer.txt")
    assert result.scorecard.result == ("win" if plain else "loss"), result.scorecard
    assert left_over(docker_client, result.run_id) == []


@pytest.mark.parametrize("command", [shape("deep", 3000), shape("wide", 25_000),
                                     shape("locked", 200)], ids=["deep", "wide", "locked"])
def test_a_tree_past_the_resets_bounds_discards_the_sandbox(
        docker_client: Any, runtime: str, command: str) -> None:
    """The reuse reset lists no more than its bounds (20,000 entries, 48 levels): past
    them it is not verified, and the sandbox is discarded — the run it served is not
    touched, and the next run gets a fresh sandbox."""
    reusing = Profile(name="test-reuse-trees", image=IMAGES["python"], runtime=runtime,
                      reuse_runs=5, limits=Limits(wall_timeout_s=300))
    pool = WarmPool(DockerFactory(docker_client, worker=WORKER, extra_labels=TEST_LABELS),
                    [(reusing, 1)])
    try:
        pool.fill()
        with pool.acquire(reusing, run_id="shaped") as sandbox:
            first = sandbox.id
            built = sandbox.exec(Command(command, timeout_s=120))
            assert built.exit_code == 0, built
        assert dict(pool.stats()[0].discards) == {"unverified": 1}
        with pool.acquire(reusing, run_id="after") as later:
            assert later.id != first and later.exec(Command("echo ok")).stdout == b"ok\n"
    finally:
        pool.close()
    assert left_over(docker_client, "warm", WORKER) == []
