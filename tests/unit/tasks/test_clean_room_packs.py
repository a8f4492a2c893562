"""A pack's clean-room keys (deliverables, probes, reports) as the pipeline reads them,
and the forgery battery built against a pack's own names."""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from evalfleet.sandbox.profile import Profile
from evalfleet.sandbox.testing.fake import FakeFactory
from evalfleet.scoring import load_pack
from evalfleet.tasks.checking.forgeries.battery import FORGERIES, battery, exposure, target, wins
from evalfleet.tasks.checking.forgeries.kit import NOTHING
from evalfleet.tasks.checking.forgeries.memory import ONLY_VISIBLE, startup_hook
from evalfleet.tasks.evaluation.packs import sandbox_block
from evalfleet.tasks.evaluation.pipeline import PipelineConfig, ProfileBounds, run_pipeline
from evalfleet.tasks.evaluation.plan_builder import build_plan
from evalfleet.tasks.messages import RunRequest, RunResult, Submission

PACK = Path(__file__).parents[3] / "examples" / "packs" / "fizzbuzz-coding" / "pack.yaml"


def mapping() -> dict[str, Any]:
    found: dict[str, Any] = yaml.safe_load(PACK.read_text())
    return found


def with_sandbox(**changes: Any) -> dict[str, Any]:
    pack = copy.deepcopy(mapping())
    pack["version"]["sandbox"].update(changes)
    return pack


def rejected(pack: dict[str, Any]) -> list[tuple[str, str]]:
    result = run_pipeline(json.dumps({"run_id": "r", "pack": pack}), FakeFactory(),
                          PipelineConfig(profiles={"default": ProfileBounds(
                              Profile(name="default", image="fake"))}))
    assert result.outcome == "rejected"
    return [(e.field, e.message) for e in result.errors]


def test_the_example_pack_reads_as_a_clean_room_pack() -> None:
    block = sandbox_block(load_pack(mapping()))
    assert block.deliverables == ["fizzbuzz.py"] and block.reports == {"tests": "junit"}
    assert "fizzbuzz" in block.probes


@pytest.mark.parametrize(("changes", "field", "message"), [
    ({"reports": {"nope": "junit"}}, "pack.version.sandbox.reports.nope",
     "names no code_execution validator"),
    ({"reports": {"tests": "tap"}}, "pack.version.sandbox.reports.tests", "junit"),
    ({"deliverables": ["../etc/passwd"]}, "pack.version.sandbox.deliverables", "'..'"),
    ({"deliverables": ["/etc/passwd"]}, "pack.version.sandbox.deliverables", "not a file inside"),
    ({"probes": {"bad name": {"run": "true"}}}, "pack.version.sandbox.probes", "probe names"),
    ({"probes": {"p": {"run": "true", "shell": True}}}, "pack.version.sandbox.probes.p.shell",
     "Extra inputs"),
    ({"deliverables": [], "probes": {"p": {"run": "true"}}}, "pack.version.sandbox.probes",
     "need deliverables"),
    ({"deliverables": [], "probes": {}, "imports_deliverables": True},
     "pack.version.sandbox.imports_deliverables", "needs deliverables"),
    ({"imports_deliverables": "sometimes"}, "pack.version.sandbox.imports_deliverables",
     "valid boolean"),
])
def test_clean_room_keys_are_checked_before_any_sandbox(changes: dict[str, Any], field: str,
                                                         message: str) -> None:
    problems = rejected(with_sandbox(**changes))
    assert any(f == field and message in m for f, m in problems), problems


def test_a_pack_declares_that_its_tests_import_the_deliverables() -> None:
    """Declared, every test of the plan imports the judge's copy (``PYTHONPATH``)."""
    def tests(pack: dict[str, Any]) -> list[bool]:
        loaded = load_pack(pack)
        plan = build_plan(loaded.spec, loaded.cases[0], sandbox_block(loaded),
                          RunRequest(run_id="r", pack=pack))
        return [t.imports_deliverables for t in plan.tests]
    assert tests(mapping()) == [False]
    assert tests(with_sandbox(imports_deliverables=True)) == [True]


REFERENCE = Submission(files={"fizzbuzz.py": (PACK.parent / "submissions" / "pass" /
                                              "fizzbuzz.py").read_text()})


def forged_module(source: str, name: str = "fizzbuzz") -> dict[str, Any]:
    namespace: dict[str, Any] = {"__name__": name, "__file__": f"{name}.py"}
    exec(compile(source, f"{name}.py", "exec"), namespace)
    return namespace


def test_the_memorizer_answers_only_what_the_case_shows() -> None:
    """Built from the reference and the visible case (``upto: 15``): the reference's answer
    for 15, nothing for the hidden probe's 97; a win says what it means."""
    pack = load_pack(mapping())
    aim = target(pack, REFERENCE, pack.cases[0])
    assert "15" in aim.visible and aim.reference == (("fizzbuzz.py", REFERENCE.files[
        "fizzbuzz.py"]),)
    memorizer = next(f for f in battery(pack, REFERENCE, pack.cases[0]) if f.name == "memorizer")
    module = forged_module(str(memorizer.submission.files["fizzbuzz.py"]))
    assert module["fizzbuzz"](15)[14] == "FizzBuzz" and module["fizzbuzz"](97) is None
    assert memorizer.means == ONLY_VISIBLE


def test_probe_hooks_load_the_reference_in_the_deliverables_place() -> None:
    """The deliverable does nothing; the planted hook puts the reference in sys.modules."""
    pack = load_pack(mapping())
    hooks = next(f for f in battery(pack, REFERENCE) if f.name == "probe start-up hooks")
    plant = str(hooks.submission.files["plant.py"])
    assert "usercustomize.py" in plant and "answers.pth" in plant
    assert hooks.submission.files["fizzbuzz.py"] == NOTHING
    hook = startup_hook({"forged_fizzbuzz": str(REFERENCE.files["fizzbuzz.py"])})
    try:
        exec(compile(hook, "usercustomize.py", "exec"), {})
        assert sys.modules["forged_fizzbuzz"].fizzbuzz(15)[14] == "FizzBuzz"
    finally:
        sys.modules.pop("forged_fizzbuzz", None)
    assert repr(startup_hook({"fizzbuzz": str(REFERENCE.files["fizzbuzz.py"])})) in plant


def test_the_battery_aims_at_the_packs_own_names() -> None:
    pack = load_pack(mapping())
    aim = target(pack)
    assert (aim.deliverables, aim.test_files, aim.module) == (
        ("fizzbuzz.py",), ("test_fizzbuzz.py",), "fizzbuzz")
    forgeries = battery(pack, REFERENCE)
    assert [f.name for f in forgeries] == list(FORGERIES)
    by_name = {f.name: f for f in forgeries}
    deep = by_name.pop("unwritable deliverable").submission.files
    assert "fizzbuzz.py" not in deep and "os.makedirs('fizzbuzz.py'" in str(deep["deep.py"])
    assert all("fizzbuzz.py" in f.submission.files for f in by_name.values())
    blocked = by_name["blocked seeding"]
    assert "mkdir -p 'test_fizzbuzz.py/x'" in str(blocked.submission.commands[0].run)


def test_the_battery_aims_at_an_evaluators_answers_and_scores() -> None:
    """For a pack with a custom-script evaluator: the files its checks require, and the
    keys of its ``script`` dimensions (the example pack cipher-forge-lite)."""
    path = Path(__file__).parents[3] / "examples" / "packs" / "cipher-forge-lite" / "pack.yaml"
    pack = load_pack(yaml.safe_load(path.read_text()))
    aim = target(pack)
    assert (aim.answers, aim.scores) == (("answer.json",), ("correctness", "methodology"))
    by_name = {f.name: f for f in battery(pack)}
    link = by_name["evaluator link"].submission
    assert "answer.json" in link.files
    assert "ln -sf /proc/self/cwd/ground-truth.json 'answer.json'" in link.commands[0].run
    plant = str(by_name["evaluator hooks"].submission.files["plant.py"])
    assert '"correctness": 1000, "methodology": 1000' in plant


def test_without_deliverables_the_battery_aims_at_the_tested_files() -> None:
    old = copy.deepcopy(mapping())
    for key in ("deliverables", "probes", "reports"):
        old["version"]["sandbox"].pop(key)
    assert target(load_pack(old)).deliverables == ("fizzbuzz.py",)


def card(result: str | None, verdict: str = "fail", outcome: str = "scored") -> RunResult:
    scorecard = None if outcome != "scored" else {
        "status": "complete", "strategy": "weighted", "overall_score": 0.1, "passed": False,
        "overall_reason": "", "validity": "valid" if result else "invalid", "result": result,
        "validator_details": [{"key": "tests", "type": "code_execution", "verdict": verdict,
                               "state": "completed", "outcome_class": verdict, "reason": "",
                               "normalized_score": 0.0}]}
    return RunResult.model_validate({"run_id": "r", "outcome": outcome,
                                     "scorecard": scorecard})


def test_what_a_forgery_winning_means() -> None:
    assert not wins(card("loss"))
    assert wins(card("draw")) and wins(card("win"))
    assert wins(card("loss", verdict="pass"))  # a passing code_execution is a win already
    assert wins(card(None))  # "no contest" instead of a loss
    assert wins(card(None, outcome="infra_error"))  # "no result" instead of a loss
    refused = RunResult.model_validate({"run_id": "r", "outcome": "rejected", "errors": [
        {"field": "request.submission.events[0].type", "message": "x"}]})
    assert not wins(refused)  # the submission was refused: no verdict came of it
    refused.errors[0].field = "request.pack"
    assert wins(refused)  # refused for another reason: no result instead of a loss


def test_grader_events_in_a_submission_are_refused_before_any_sandbox() -> None:
    """A submission carrying the grader's events (a passing test run and a perfect
    evaluator, sorted after the fleet's own by a late time and no sequence number) is
    refused, each event named; none of it reaches scoring, and no sandbox starts."""
    forgery = next(f for f in battery(load_pack(mapping())) if f.name == "grader events")
    factory = FakeFactory()
    result = run_pipeline(json.dumps({"run_id": "r", "pack": mapping(),
                                      "submission": forgery.submission.model_dump()}),
                          factory, PipelineConfig(profiles={"default": ProfileBounds(
                              Profile(name="default", image="fake"))}))
    assert result.outcome == "rejected" and result.scorecard is None
    assert [e.field for e in result.errors] == [
        "request.submission.events[0].type", "request.submission.events[1].type"]
    assert "grader's own event" in result.errors[0].message
    assert factory.sandboxes == []


def test_validate_warns_how_a_packs_tests_could_be_forged(tmp_path: Path) -> None:
    """The example pack: no warning. The same pack with its tests next to the submission
    and no report: one warning per weakness, on stderr, exit 0."""
    import subprocess

    old = copy.deepcopy(mapping())
    for key in ("deliverables", "probes", "reports"):
        old["version"]["sandbox"].pop(key)
    path = tmp_path / "old.yaml"
    path.write_text(yaml.safe_dump(old))
    run = [sys.executable, "-m", "evalfleet.workers", "validate"]
    clean = subprocess.run([*run, str(PACK)], capture_output=True, text=True, check=False)
    forgeable = subprocess.run([*run, str(path)], capture_output=True, text=True, check=False)
    assert (clean.returncode, clean.stderr) == (0, "")
    assert forgeable.returncode == 0 and forgeable.stdout.startswith("valid: fizzbuzz-coding")
    assert forgeable.stderr.splitlines() == [
        "warning: pack.version.sandbox.deliverables is not set: the tests of tests run next "
        "to the submission's files, which can forge their verdict (docs/packs.md, \"Packs that "
        "cannot be gamed\")",
        "warning: pack.version.sandbox.reports.tests is not set: its verdict is the test's "
        "output or exit code, not the judge's own report"]


@pytest.mark.parametrize(("kind", "config"), [
    ("file_content_match", {"match_mode": "not_contains"}),
    ("postcondition", {"condition": "not_contains", "value": "import os"}),
])
def test_a_check_that_passes_on_absent_text_is_flagged(kind: str, config: dict[str, Any]) -> None:
    """A capture is cut at its caps and validators see only what is left (AgentClash's
    rules): a submission that pads the file, or the captures declared before it, pushes
    the text past the cut. ``validate`` says so, and how to declare it safely."""
    changed = copy.deepcopy(mapping())
    validators = changed["version"]["evaluation_spec"]["validators"]
    validators.append({"key": "no_os", "type": kind, "target": "file:solution",
                       "config": config, **({"expected_from": "literal:import os"}
                                            if kind == "file_content_match" else {})})
    warnings = exposure(load_pack(changed))
    assert warnings == [f"evaluation_spec.validators[{len(validators) - 1}] (no_os) passes "
                        "while its text is not in the capture, and a capture is cut at its "
                        "cap (1 MiB a file, 10 MiB a run, charged by full size in "
                        "declaration order): declare this capture first, with "
                        "max_size_bytes above any honest file, or a submission that pads "
                        "the file or the captures before it hides the text"]
    assert exposure(load_pack(mapping())) == []  # forbidden_files: cut listings fail it


def test_a_declared_import_is_flagged() -> None:
    """The tests run the candidate's code in their own process: ``validate`` says so."""
    warnings = exposure(load_pack(with_sandbox(imports_deliverables=True)))
    assert len(warnings) == 1
    assert warnings[0].startswith("pack.version.sandbox.imports_deliverables is set: the "
                                  "candidate's code runs in the tests' process")
