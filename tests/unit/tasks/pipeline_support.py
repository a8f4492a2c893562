"""The run pipeline's test fixtures: a small pack, a request, a config, a fake run."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from evalfleet.sandbox.profile import Limits, Profile
from evalfleet.sandbox.results import ExecResult
from evalfleet.sandbox.testing.fake import FakeFactory
from evalfleet.tasks.evaluation.pipeline import PipelineConfig, ProfileBounds, run_pipeline

MiB = 1024 * 1024
EXAMPLES = Path(__file__).parents[3] / "examples" / "packs"
PACK: dict[str, Any] = {
    "pack": {"slug": "answer"},
    "version": {
        "sandbox": {"files": {"README.md": "write 42 to answer.txt"}},
        "evaluation_spec": {
            "name": "answer", "version_number": 1, "judge_mode": "deterministic",
            "runtime_limits": {"max_duration_ms": 3000, "max_total_tokens": 1000},
            "post_execution_checks": [{"key": "answer", "type": "file_capture",
                                       "path": "/workspace/answer.txt"}],
            "validators": [
                {"key": "says_42", "type": "contains", "target": "final_output",
                 "expected_from": "literal:42"},
                {"key": "file_42", "type": "exact_match", "target": "file:answer",
                 "expected_from": "literal:42"},
                {"key": "tests", "type": "code_execution", "target": "file:answer",
                 "config": {"test_command": "run-tests {{ n }}"}},
            ],
            "metrics": [{"key": "ok", "type": "boolean", "collector": "run_completed_successfully"},
                        {"key": "fails", "type": "numeric", "collector": "run_failure_count"}],
            "scorecard": {"dimensions": ["correctness", "reliability"]},
        },
    },
    "input_sets": [{"key": "default", "cases": [{"case_key": "c1", "payload": {"n": 7}}]}],
}
TESTS_PASS = ExecResult(exit_code=0, stdout=b"3 passed in 0.01s\n")


def config(**profile: Any) -> PipelineConfig:
    """A pipeline config with one registered profile ``default`` (and ``egress``)."""
    base = Profile(name="default", image="fake", limits=Limits(**profile))
    return PipelineConfig(profiles={
        "default": ProfileBounds(base),
        "egress": ProfileBounds(Profile(name="egress", image="fake"), allow_network=True)})


def request(**overrides: Any) -> dict[str, Any]:
    """A valid request that seeds and prints 42."""
    body: dict[str, Any] = {
        "run_id": "run-1", "pack": copy.deepcopy(PACK), "metadata": {"team": "blue"},
        "submission": {"files": {"answer.txt": "42"}, "commands": [{"run": "echo 42"}]}}
    body.update(overrides)
    return body


def run(body: Any, **profile: Any) -> tuple[Any, FakeFactory]:
    """Run the pipeline with a fake factory whose test command passes 3 tests."""
    factory = FakeFactory(script={"run-tests 7": TESTS_PASS})
    return run_pipeline(body, factory, config(**profile)), factory


def with_pack(change: Any) -> dict[str, Any]:
    body = request()
    change(body["pack"])
    return body
