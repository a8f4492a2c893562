"""The Clawdiators layer through the pipeline and the in-memory sandbox."""

from __future__ import annotations

import json
from typing import Any

import pytest

from evalfleet.sandbox.profile import Profile
from evalfleet.sandbox.results import ExecResult
from evalfleet.sandbox.testing.fake import FakeFactory
from evalfleet.scoring import evaluate, load_pack
from evalfleet.tasks.evaluation.pipeline import PipelineConfig, ProfileBounds, run_pipeline

SCRIPT = """echo starting
echo '{"scores": {"quality": 700}, "details": {"checked": 1}}'
"""


def pack(**clawdiators: Any) -> dict[str, Any]:
    """A pack whose ``quality`` dimension comes from a shell evaluator."""
    layer = {"evaluator": {"runtime": "shell", "script": SCRIPT, "ground_truth": {"a": 42}},
             "submission_checks": [{"key": "has_answer", "type": "required_files",
                                    "paths": ["answer.txt"], "guards": ["quality"]}],
             **clawdiators}
    return {"pack": {"slug": "claw"}, "version": {"evaluation_spec": {
        "name": "claw", "version_number": 1, "judge_mode": "deterministic",
        "validators": [{"key": "v", "type": "contains", "target": "final_output",
                        "expected_from": "literal:42"}],
        "scorecard": {"dimensions": ["correctness", {"key": "quality", "source": "script"}]},
        "clawdiators": layer}}}


def config() -> PipelineConfig:
    """One registered profile on the fake image."""
    return PipelineConfig(profiles={"default": ProfileBounds(Profile(name="default",
                                                                     image="fake"))})


def body(files: dict[str, str] | None = None, **submission: Any) -> dict[str, Any]:
    """A request around :func:`pack`."""
    return {"run_id": "claw-1", "pack": pack(),
            "submission": {"files": {"answer.txt": "42"} if files is None else files,
                           "commands": [{"run": "echo 42"}], **submission}}


def test_evaluator_scores_and_its_event_rescored_offline() -> None:
    """The shell evaluator runs last; its event re-scores to the same scorecard."""
    result = run_pipeline(body(), FakeFactory(), config())
    card = result.scorecard
    assert card is not None and card.dimensions["quality"].score == 0.7
    types = [e["type"] for e in result.events]
    assert "grader.evaluator.completed" in types and "grader.submission.manifest" in types
    again = evaluate(load_pack(pack()).spec, result.events)
    assert again.model_dump() == card.model_dump()


def test_missing_required_file_zeroes_the_guarded_dimension() -> None:
    """No answer.txt: ``quality`` scores 0 with the check's reason."""
    card = run_pipeline(body(files={"other.txt": "x"}), FakeFactory(), config()).scorecard
    assert card is not None and card.dimensions["quality"].score == 0.0
    assert card.submission_warnings[0].check == "has_answer"


@pytest.mark.parametrize("path", ["secrets/api", "./secrets/api", "secrets//api",
                                  "secrets/./api", "/workspace/secrets/api"])
def test_the_manifest_names_files_as_the_workspace_holds_them(path: str) -> None:
    """A forbidden path spelled another way (``./``, ``//``, absolute) is the same file
    in the workspace, and the check that forbids it sees it (it zeroed nothing before)."""
    forbid = {"key": "no_secrets", "type": "forbidden_paths", "paths": ["secrets/*"],
              "guards": ["quality"]}
    request = body(files={"answer.txt": "42", path: "key"})
    request["pack"] = pack(submission_checks=[forbid])
    result = run_pipeline(request, FakeFactory(), config())
    card = result.scorecard
    assert card is not None and card.dimensions["quality"].score == 0.0
    assert [w.check for w in card.submission_warnings] == ["no_secrets"]
    manifest = next(e for e in result.events if e["type"] == "grader.submission.manifest")
    assert {f["path"] for f in manifest["payload"]["files"]} == {"answer.txt", "secrets/api"}


def test_python_evaluator_can_be_scripted_in_the_fake() -> None:
    """``script["evaluator"]`` stands in for a python evaluator in unit tests."""
    request = body()
    request["pack"]["version"]["evaluation_spec"]["clawdiators"]["evaluator"]["runtime"] = "python"
    factory = FakeFactory({"evaluator": ExecResult(exit_code=1, stderr=b"boom\n")})
    card = run_pipeline(request, factory, config()).scorecard
    assert card is not None and card.dimensions["quality"].score == 0.0  # it ran: a crash
    assert card.dimensions["quality"].reason.endswith("stderr: boom")  # is the candidate's


def trajectory(tokens: int) -> list[dict[str, Any]]:
    """An agent trajectory: started, one model call with ``tokens`` output tokens."""
    return [{"type": "system.run.started", "sequence_number": 1,
             "occurred_at": "2026-01-01T00:00:00Z", "payload": {}},
            {"type": "model.call.completed", "sequence_number": 2,
             "occurred_at": "2026-01-01T00:00:01Z",
             "payload": {"provider_key": "openai", "provider_model_id": "gpt-4o",
                         "usage": {"input_tokens": 0, "output_tokens": tokens}}},
            {"type": "system.run.completed", "sequence_number": 3,
             "occurred_at": "2026-01-01T00:00:02Z", "payload": {"final_output": "42"}}]


def test_enforced_constraint_ends_the_run_before_any_container() -> None:
    """A submitted trajectory over ``max_total_tokens`` with ``enforce``: no sandbox."""
    request = body(events=trajectory(500))
    request["pack"] = pack(constraints={"max_total_tokens": 100, "enforce": True})
    factory = FakeFactory()
    result = run_pipeline(request, factory, config())
    assert factory.sandboxes == []
    assert result.scorecard is not None
    assert result.scorecard.constraint_violations[0].message == (
        "max_total_tokens exceeded: 500 > 100")
    failed = [e for e in result.events if e["type"] == "system.run.failed"]
    assert "constraint violated before the run" in json.dumps(failed)


def test_unenforced_constraint_is_reported_and_the_run_goes_on() -> None:
    """Without ``enforce`` the sandbox runs and the violation is only reported."""
    request = body(events=trajectory(500))
    request["pack"] = pack(constraints={"max_total_tokens": 100})
    factory = FakeFactory()
    result = run_pipeline(request, factory, config())
    assert len(factory.sandboxes) == 1
    assert result.scorecard is not None and result.scorecard.constraint_violations
    assert result.scorecard.harness_warning is None
