"""The battery's shapes that must lose (issue 38, item 4): each builds the shape it names
against the pack's own names, the four the sandbox cannot seed are a scored loss before any
sandbox starts, and for every shape a refusal is a win, as any end but a scored loss is."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from unit.tasks.checking_support import card, result, subject

from evalfleet.sandbox.profile import Limits, Profile
from evalfleet.sandbox.seed_limits import NAME_MAX, PATH_MAX
from evalfleet.sandbox.testing.fake import FakeFactory
from evalfleet.scoring import load_pack
from evalfleet.tasks.checking.forgeries import shapes
from evalfleet.tasks.checking.forgeries.battery import FORGERIES, battery, target, wins
from evalfleet.tasks.checking.forgeries.kit import Forgery, Target
from evalfleet.tasks.checking.forgeries.shapes import SHAPES
from evalfleet.tasks.checking.sections import Forgeries
from evalfleet.tasks.evaluation.pipeline import PipelineConfig, ProfileBounds, run_pipeline
from evalfleet.tasks.messages import RunResult

pytestmark = pytest.mark.unit

EXAMPLES = Path(__file__).parents[3] / "examples" / "packs"
#: The shapes the sandbox cannot seed: each a scored loss before any sandbox starts.
UNSEEDABLE = ("name past NAME_MAX", "path past PATH_MAX", "file and directory",
              "too many files")
#: An evaluator's answer in a directory of its own, and a deliverable.
AIM = Target(deliverables=("solution.py",), test_files=("test_solution.py",),
             answers=("out/answer.json",), listings=("/workspace/out", "logs"))


def example(name: str) -> dict[str, Any]:
    found: dict[str, Any] = yaml.safe_load((EXAMPLES / name / "pack.yaml").read_text())
    return found


def built(name: str, aim: Target = AIM) -> Forgery:
    return SHAPES[name](aim)


def test_the_shapes_follow_the_fleets_forgeries_and_only_they_must_lose() -> None:
    """The registry's order is the report's: the shapes come last; only they must lose."""
    names = list(FORGERIES)
    assert names[-len(SHAPES):] == list(SHAPES)
    assert {f.name for f in battery(load_pack(example("fizzbuzz-coding"))) if f.must_lose} \
        == set(SHAPES)


@pytest.mark.parametrize("name", list(SHAPES))
def test_every_shape_plants_the_answers_and_deliverables(name: str) -> None:
    """Like the other forgeries, so that only the shape can keep it from losing."""
    files = built(name).submission.files
    assert files["out/answer.json"] == "{}" and "solution.py" in files


def test_a_name_past_name_max() -> None:
    names = [part for path in built("name past NAME_MAX").submission.files
             for part in path.split("/")]
    assert max(len(part.encode()) for part in names) == NAME_MAX + 1 == 256


def test_a_path_past_path_max_of_names_the_kernel_takes() -> None:
    longest = max(built("path past PATH_MAX").submission.files, key=len)
    assert len(longest.encode()) > PATH_MAX == 4096
    assert max(len(part.encode()) for part in longest.split("/")) <= NAME_MAX


def test_a_path_both_a_file_and_a_directory() -> None:
    files = built("file and directory").submission.files
    assert "a" in files and "a/b" in files


def test_more_files_than_the_seed_limit() -> None:
    files = built("too many files").submission.files
    padding = [path for path in files if path not in AIM.deliverables + AIM.answers]
    assert len(padding) == Limits.seed_files + 1 == 10_001


@pytest.mark.parametrize("name", UNSEEDABLE)
@pytest.mark.parametrize("pack", ["fizzbuzz-coding", "cipher-forge-lite"])
def test_what_the_sandbox_cannot_seed_is_a_scored_loss_before_any_sandbox(
        name: str, pack: str) -> None:
    """Item 1 of the issue: the worker refuses the files, books the loss, starts nothing."""
    forgery = next(f for f in battery(load_pack(example(pack))) if f.name == name)
    factory = FakeFactory()
    run = run_pipeline(json.dumps({"run_id": "r", "pack": example(pack),
                                   "submission": forgery.submission.model_dump()}),
                       factory, PipelineConfig(profiles={"default": ProfileBounds(
                           Profile(name="default", image="fake"))}))
    assert run.outcome == "scored" and run.scorecard is not None
    assert (run.scorecard.score, run.scorecard.result) == (0, "loss")
    assert "the sandbox cannot hold the submission" in run.reason
    assert factory.sandboxes == []
    assert not wins(run, must_lose=True)


def sh(command: str, where: Path, python: bool = True) -> None:
    """Run ``command`` in ``where`` as a sandbox would, with python3 on the PATH or not
    (then the shell's fallback: only ``mkdir`` and ``chmod`` are at hand)."""
    tools = where.parent / "bin"
    tools.mkdir(exist_ok=True)
    found = {"mkdir": shutil.which("mkdir"), "chmod": shutil.which("chmod"),
             "python3": os.path.realpath(sys.executable)}
    for tool in ("mkdir", "chmod", *(["python3"] if python else [])):
        if not (tools / tool).exists():
            (tools / tool).symlink_to(found[tool] or tool)
    subprocess.run([shutil.which("sh") or "sh", "-c", command], cwd=where, check=True,
                   env={"PATH": str(tools)}, timeout=60)


def command(forgery: Forgery) -> str:
    """The forgery's one command."""
    [only] = forgery.submission.commands
    return str(only.run)


def seeded(forgery: Forgery, where: Path) -> Path:
    """``where`` holding the forgery's files (text only), as the sandbox seeds them."""
    for path, content in forgery.submission.files.items():
        (where / path).parent.mkdir(parents=True, exist_ok=True)
        (where / path).write_text(str(content))
    return where


@pytest.mark.parametrize("python", [True, False], ids=["python3", "sh"])
def test_a_deep_tree_of_the_longest_names_around_every_answer(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, python: bool) -> None:
    """Built (here 6 levels, not thousands) in the workspace and the answer's directory;
    thousands of levels of 255-byte names are far past PATH_MAX and tree_depth."""
    assert shapes.DEPTH >= 2_000 and shapes.DEPTH * (NAME_MAX + 1) > 100 * PATH_MAX
    assert Limits.tree_depth < shapes.DEPTH
    monkeypatch.setattr(shapes, "DEPTH", 6)
    forgery = built("deep tree")
    workspace = seeded(forgery, tmp_path / "workspace")
    sh(command(forgery), workspace, python)
    for where in (workspace, workspace / "out"):
        chain = where.joinpath(*[shapes.LONG_NAME] * 6)
        assert chain.is_dir() and not any(chain.iterdir())
        assert len(shapes.LONG_NAME.encode()) == NAME_MAX


@pytest.mark.parametrize("python", [True, False], ids=["python3", "sh"])
def test_a_wide_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, python: bool) -> None:
    """Built here with 50 files; the battery's has more than the evaluator's preparation
    walks (``tree_entries``), and so more than a seeding or a listing takes."""
    assert max(Limits.seed_files, Limits.listing_entries, Limits.tree_entries) < shapes.WIDE
    monkeypatch.setattr(shapes, "WIDE", 50)
    forgery = built("wide tree")
    workspace = seeded(forgery, tmp_path / "workspace")
    sh(command(forgery), workspace, python)
    assert len(list((workspace / "wide").iterdir())) == 50


def test_a_locked_tree_around_every_answer(tmp_path: Path) -> None:
    """Directories of mode 000, nested, with files in each, in the workspace and around
    the answer (built by the shell alone: it needs no python3)."""
    forgery = built("locked tree")
    workspace = seeded(forgery, tmp_path / "workspace")
    sh(command(forgery), workspace, python=False)
    for where in (workspace, workspace / "out"):
        levels = [where.joinpath(*["locked"] * depth) for depth in range(1, shapes.LOCKED + 1)]
        modes = [stat.S_IMODE(level.stat().st_mode) for level in levels]
        for level in levels:
            level.chmod(0o755)  # so that the files can be counted, and tmp_path removed
        assert modes == [0] * shapes.LOCKED
        assert all(len(list(level.glob("f*"))) == shapes.LOCKED_FILES for level in levels)


@pytest.mark.parametrize("python", [True, False], ids=["python3", "sh"])
def test_a_listing_padded_past_its_cap_in_every_listed_directory(
        tmp_path: Path, python: bool) -> None:
    """Past the default cap in each directory the pack lists: absolute or relative."""
    workspace = tmp_path / "workspace"
    aim = Target(deliverables=(), test_files=(), listings=(str(workspace / "out"), "logs"))
    forgery = built("padded listing", aim)
    sh(command(forgery), seeded(forgery, workspace), python)
    for listed in (workspace / "out", workspace / "logs"):
        assert len(os.listdir(listed)) == Limits.listing_entries + 1


def test_a_pack_without_listings_gets_its_workspace_padded() -> None:
    """fizzbuzz-coding lists its workspace; cipher-forge-lite lists nothing, and has its
    workspace padded."""
    listed = target(load_pack(example("fizzbuzz-coding"))).listings
    aim = target(load_pack(example("cipher-forge-lite")))
    assert (listed, aim.listings) == (("/workspace",), ())
    assert "for where in ['.']:" in str(built("padded listing", aim).submission.files["fill.py"])


def refused_run() -> RunResult:
    return RunResult.model_validate({"run_id": "r", "outcome": "rejected", "errors": [
        {"field": "request.submission.files.x", "message": "too big"}]})


def test_for_a_shape_anything_but_a_scored_loss_wins() -> None:
    """A refusal for what the submission holds excuses the other forgeries, not a shape:
    a void its candidate could choose is no loss."""
    lost = result(card(0, "loss"))
    assert not wins(refused_run()) and wins(refused_run(), must_lose=True)
    assert not wins(lost) and not wins(lost, must_lose=True)
    for outcome in ("infra_error", "internal_error", "rejected"):
        assert wins(result(outcome=outcome), must_lose=True)
    assert wins(result(card(None, None)), must_lose=True)  # no contest


def test_the_check_counts_a_refused_shape_as_a_win_and_no_other() -> None:
    """The forgery section: every forgery refused at the intake; only the shapes win."""
    case = subject()
    runs = {f"forgery:{name}": [refused_run()] for name in FORGERIES}
    report = Forgeries().judge(case, runs)
    won = [row[0] for row in report.rows if row[-1]]
    assert won == list(SHAPES)
    assert len([f for f in report.findings if f.level == "error"]) == len(SHAPES)
