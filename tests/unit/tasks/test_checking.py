"""The check's plumbing: trials and requests, the section registry as a seam, references,
the pack digest, and the report's verdict."""

from __future__ import annotations

import copy
import json
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml
from unit.tasks.checking_support import PACK, card, result, subject

from evalfleet.sandbox.errors import SandboxUnavailable
from evalfleet.scoring import load_pack
from evalfleet.tasks.checking import (
    SECTIONS,
    CheckError,
    CheckReport,
    Section,
    SectionReport,
    Subject,
    Trial,
    check_pack,
    one_by_one,
    plan,
    subjects,
)
from evalfleet.tasks.checking.forgeries.battery import FORGERIES, battery
from evalfleet.tasks.checking.sections import Runs
from evalfleet.tasks.evaluation.packs import pack_digest
from evalfleet.tasks.messages import RunRequest, RunResult, Submission


def fake_fleet(requests: Sequence[RunRequest]) -> list[RunResult]:
    """Every reference run wins, the empty one loses, a forgery wins on run 2 only."""
    found = []
    for request in requests:
        trial = request.metadata["evalfleet_check"]["trial"]
        won = trial == "reference" or (trial.startswith("forgery") and request.check_run == 2)
        found.append(result(card(1000, "win") if won else card(0, "loss")))
    return found


def test_the_plan_runs_the_reference_k_times_and_the_empty_submission_once() -> None:
    """Per case: reference runs 1 … K, then the empty submission as run 1 of its own."""
    planned = plan([subject(runs=3)], nonce="n0")
    forgeries = [p for p in planned if p.label.startswith("forgery:")]
    planned = [p for p in planned if not p.label.startswith("forgery:")]

    assert [(p.label, p.request.check_run) for p in planned] == [
        ("reference", 1), ("reference", 2), ("reference", 3), ("empty", 1)]
    built = [f.name for f in battery(subject().pack)]  # no memorizer: no Python reference
    assert [p.label for p in forgeries] == [f"forgery:{name}" for name in built]
    assert set(FORGERIES) - set(built) == {"memorizer", "probe start-up hooks"}
    assert {p.request.check_run for p in forgeries} == {1}
    first = planned[0].request
    assert first.case_key == "c1" and first.pack == PACK
    assert first.submission.files == {"answer.txt": "42"}
    assert planned[3].request.submission == Submission()
    assert len({p.request.run_id for p in [*planned, *forgeries]}) == 4 + len(built)
    assert first.run_id.startswith(f"check-{pack_digest(PACK)[:12]}-n0-")


def test_a_sound_pack_passes_every_core_section() -> None:
    """With a winning reference and a losing empty submission the pack is sound."""
    report = check_pack([subject(), subject(case="c2")], fake_fleet, where="local")

    assert report.passed
    assert [c.case_key for c in report.cases] == ["c1", "c2"]
    assert [s.key for s in report.cases[0].sections] == [s.key for s in SECTIONS]
    assert (report.pack, report.version_number, report.runs) == ("answer", 2, 5)
    assert (report.image_ids, report.runtimes) == (["sha256:abc"], ["runsc"])
    assert report.digest == pack_digest(PACK)


class Extra(Section):
    """A section added to the registry (non-core): one forgery per deliverable."""

    key = "extra"
    title = "No extra forgery wins"
    core = False

    def trials(self, subject: Subject) -> list[Trial]:
        return [Trial(f"forgery:{path}", Submission(files={path: "x"}), 2)
                for path in subject.deliverables]

    def judge(self, subject: Subject, runs: Runs) -> SectionReport:
        report = SectionReport(key=self.key, title=self.title, core=self.core)
        for label, results in runs.items():
            if label.startswith("forgery:") and any(
                    r.scorecard and r.scorecard.result == "win" for r in results):
                report.add("error", f"{label} wins")
        return report


def test_a_section_added_to_the_registry_gets_its_trials_run_and_judged() -> None:
    """A non-core section's trials run beside the others; its failure is recorded per
    section but does not make the pack unsound."""
    report = check_pack([subject(runs=2)], fake_fleet, where="local",
                        sections=[*SECTIONS, Extra()])

    extra = report.cases[0].sections[-1]
    assert [f.message for f in extra.findings] == ["forgery:/workspace/answer.txt wins"]
    assert report.passed
    assert report.sections["extra"] is False and report.sections["reference"] is True
    assert report.sections["forgeries"] is True  # the battery's own runs all lost


def test_sections_asking_for_the_same_trial_share_its_runs() -> None:
    """Two sections asking for "reference" (5 and 7 repeats) make one series of 7 runs."""
    class MoreReference(Extra):
        def trials(self, subject: Subject) -> list[Trial]:
            return [Trial("reference", Submission(files={"other": "y"}), 7)]

    planned = plan([subject()], sections=[*SECTIONS, MoreReference()])
    reference = [p.request for p in planned if p.label == "reference"]

    assert [r.check_run for r in reference] == list(range(1, 8))
    assert all(r.submission.files == {"answer.txt": "42"} for r in reference)


def test_one_failing_core_section_makes_the_pack_unsound() -> None:
    """An empty submission that wins: unsound, and the error is listed with its case."""
    def everything_wins(requests: Sequence[RunRequest]) -> list[RunResult]:
        return [result() for _ in requests]

    report = check_pack([subject(runs=1)], everything_wins, where="local")

    assert not report.passed
    core = [e for e in report.errors() if ": forgeries: " not in e]
    assert core == ["c1: empty: the empty submission does not lose: 1000/1000 "
                    "win (valid): weighted: fine"]
    assert len(report.errors()) - len(core) == len(battery(subject().pack))  # all won too


def pack_dir(tmp_path: Path, reference: Any) -> Path:
    tmp_path.mkdir(exist_ok=True)
    manifest = copy.deepcopy(PACK)
    manifest["version"]["sandbox"]["reference"] = reference
    (tmp_path / "pack.yaml").write_text(yaml.safe_dump(manifest))
    for name in ("ref", "ref2"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "answer.txt").write_text(name)
    return tmp_path


def load_subjects(tmp_path: Path, declared: Any, **options: Any) -> list[Subject]:
    """The subjects of a pack file declaring ``reference: declared``."""
    folder = pack_dir(tmp_path, declared)
    mapping = yaml.safe_load((folder / "pack.yaml").read_text())
    return subjects(load_pack(folder / "pack.yaml"), mapping, folder, runs=5, **options)


def test_one_reference_path_serves_every_case(tmp_path: Path) -> None:
    """``reference: ref`` (relative to the pack file) is the reference of both cases."""
    found = load_subjects(tmp_path, "ref")

    assert [(s.case_key, answer(s)) for s in found] == [("c1", "ref"), ("c2", "ref")]


def test_a_reference_per_case_and_the_override(tmp_path: Path) -> None:
    """A mapping gives each case its own; ``--reference`` replaces them all; ``--case``
    checks one."""
    mapped = load_subjects(tmp_path / "a", {"c1": "ref", "c2": "ref2"})
    override = load_subjects(tmp_path / "b", "ref", reference=tmp_path / "b" / "ref2",
                             case_key="c2")

    assert [answer(s) for s in mapped] == ["ref", "ref2"]
    assert [(s.case_key, answer(s)) for s in override] == [("c2", "ref2")]


def answer(found: Subject) -> str:
    """The reference's answer.txt."""
    item = found.reference.files["answer.txt"]
    return item if isinstance(item, str) else item.content


@pytest.mark.parametrize(("reference", "message"), [
    (None, "reference: the pack names no reference submission"),
    ({"c1": "ref"}, r"reference: names no reference for case\(s\) c2"),
    ("/abs/ref", "must be a path relative to the pack file"),
    (["ref"], "must be a path, or a mapping of case keys to paths"),
    ("missing", "reference submission"),
])
def test_a_missing_or_bad_reference_stops_the_check(tmp_path: Path, reference: Any,
                                                    message: str) -> None:
    """Every way a reference can be wrong is a CheckError naming the pack field."""
    with pytest.raises(CheckError, match=message):
        load_subjects(tmp_path, reference)


def test_the_digest_is_the_same_from_the_file_and_from_the_request(tmp_path: Path) -> None:
    """A pack file's mapping and the one a worker decodes from the request's JSON (key order
    and a YAML date included) have one digest; any change of the document changes it."""
    text = yaml.safe_dump({**PACK, "released": "2026-11-23"}).replace("'2026-11-23'",
                                                                      "2026-11-23")
    loaded = yaml.safe_load(text)
    request = RunRequest(run_id="r", pack=loaded)
    decoded = json.loads(request.model_dump_json())["pack"]
    changed = copy.deepcopy(loaded)
    changed["version"]["evaluation_spec"]["version_number"] = 3

    assert type(loaded["released"]).__name__ == "date"
    assert pack_digest(loaded) == pack_digest(dict(reversed(list(decoded.items()))))
    assert pack_digest(changed) != pack_digest(loaded)


def test_an_empty_report_is_not_sound() -> None:
    """No case checked means nothing was proved."""
    assert not CheckReport(pack="p", digest="d", runs=5, where="local").seal().passed


def test_runs_side_by_side_keep_their_order_and_each_says_its_progress() -> None:
    """``--jobs 2``: two runs are in flight at once (neither passes the barrier alone),
    the results come back in request order whatever order they end in, every run's
    progress is said once, and an engine failure is that run's ``infra_error``."""
    requests = [entry.request for entry in plan([subject()])][:6]
    together = threading.Barrier(2, timeout=10)
    said: list[str] = []

    def run(request: RunRequest) -> RunResult:
        together.wait()
        if request is requests[3]:
            raise SandboxUnavailable("engine gone")
        return result().model_copy(update={"run_id": request.run_id})

    done = one_by_one(run, lambda r, _: said.append(r.run_id), jobs=2)(requests)
    assert [r.run_id for r in done] == [r.run_id for r in requests]
    assert sorted(said) == sorted(r.run_id for r in requests)
    assert [r.outcome for r in done] == ["scored"] * 3 + ["infra_error"] + ["scored"] * 2
    assert done[3].reason == "SandboxUnavailable: engine gone"
