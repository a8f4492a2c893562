"""A submission whose files the real sandbox refuses is the candidate's loss (issue 38
item 1): what the host cannot see (the workspace too small for them) fails ``tar`` in the
sandbox, and the run is scored, once, with no command of the submission run — never our
bug (``internal_error``) or the engine's (``infra_error``)."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from sandbox_support import hi_pack, left_over, profile

from evalfleet.sandbox.docker.factory import DockerFactory
from evalfleet.tasks.evaluation.pipeline import PipelineConfig, ProfileBounds, run_pipeline

KiB, MiB = 1024, 1024 * 1024
PACK = hi_pack("seeding")


@pytest.mark.parametrize("transport", ["supervisor", "exec"])
@pytest.mark.parametrize(("size", "workspace"), [
    (600 * KiB, 512 * KiB),  # the supervisor's seed records (a script through exec)
    (3 * MiB, 2 * MiB),  # past a request's chunk: a tar streamed on stdin
])
def test_a_workspace_too_small_for_the_submission_is_its_loss(
        factory: DockerFactory, exec_factory: DockerFactory, runtime: str,
        docker_client: Any, transport: str, size: int, workspace: int) -> None:
    run_id = f"seed-{uuid.uuid4().hex[:12]}"
    body = {"run_id": run_id, "pack": PACK,
            "submission": {"files": {"big.bin": "x" * size},
                           "commands": [{"run": "echo hi > out.txt; echo hi"}]}}
    config = PipelineConfig(profiles={"default": ProfileBounds(
        profile("python", runtime, workspace_bytes=workspace))})

    result = run_pipeline(body, exec_factory if transport == "exec" else factory, config)

    card = result.scorecard
    assert result.outcome == "scored" and card is not None, result.reason
    assert (card.result, card.score, card.passed) == ("loss", 0, False)
    assert card.overall_reason.startswith(
        "the sandbox could not write the submission's files: "), card.overall_reason
    assert result.reason == card.overall_reason
    assert result.resources["commands_skipped"] == 1
    assert result.resources["sandbox_id"] and result.resources["runtime"] == runtime
    assert not [e for e in result.events if e["type"].startswith("grader.verification.")]
    assert left_over(docker_client, run_id) == []
