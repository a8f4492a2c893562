"""The environment probe before the candidate runs, through the real sandbox (issue 20,
item 4): a pack environment that cannot work is no contest (``pack environment: …``,
scored, never retried); a sandbox that is broken is the engine's fault (an exception the
worker retries, then ``infra_error``)."""

from __future__ import annotations

import copy
import uuid
from typing import Any

import pytest
from sandbox_support import hi_pack, left_over, profile

from evalfleet.sandbox.docker.factory import DockerFactory
from evalfleet.sandbox.errors import SandboxUnavailable
from evalfleet.tasks.evaluation.pipeline import PipelineConfig, ProfileBounds, run_pipeline

MiB = 1024 * 1024
PACK = hi_pack("probe")


def run(factory: Any, runtime: str, *, sandbox: dict[str, Any] | None = None,
        test_command: str | None = None, run_id: str | None = None, **limits: Any) -> Any:
    """A winning submission against the pack, on the python image under ``runtime``."""
    pack = copy.deepcopy(PACK)
    pack["version"]["sandbox"].update(sandbox or {})
    if test_command is not None:
        pack["version"]["evaluation_spec"]["validators"][1]["config"]["test_command"] = (
            test_command)
    body = {"run_id": run_id or f"probe-{uuid.uuid4().hex[:12]}", "pack": pack,
            "submission": {"commands": [{"run": "echo hi > out.txt; echo hi"}]}}
    config = PipelineConfig(profiles={"default": ProfileBounds(
        profile("python", runtime, **limits))})
    return run_pipeline(body, factory, config), body["run_id"]


def test_a_sound_pack_environment_runs_as_before(factory: DockerFactory, runtime: str,
                                                 docker_client: Any) -> None:
    result, run_id = run(factory, runtime, sandbox={"setup_commands": [{"run": "true"}]})
    card = result.scorecard
    assert (card.validity, card.score, result.reason) == ("valid", 1000, ""), card
    assert left_over(docker_client, run_id) == []


def test_a_tool_the_packs_tests_name_is_missing(factory: DockerFactory,
                                                runtime: str) -> None:
    """Found before the candidate's files are seeded: the submission never runs."""
    result, _ = run(factory, runtime, test_command="no-such-tool-19b --check")
    card = result.scorecard
    assert result.outcome == "scored"
    assert (card.validity, card.score, card.result) == ("invalid", None, None)
    assert card.validity_reason == (
        "pack environment: no `no-such-tool-19b` on the sandbox's PATH")
    assert result.resources["commands_skipped"] == 1
    assert result.attempt == 1


def test_the_packs_files_do_not_fit_the_workspace(factory: DockerFactory,
                                                  runtime: str) -> None:
    big = "x" * (3 * MiB)
    result, _ = run(factory, runtime, sandbox={"test_files": {"data.txt": big}},
                    workspace_bytes=2 * MiB)
    reason = result.scorecard.validity_reason
    assert reason.startswith("pack environment: the workspace has "), reason
    assert reason.endswith("free, the pack's files need 3.0 MiB"), reason


class KillingFactory:
    """Hands out sandboxes whose container is killed before the first step: the engine's
    fault, not the pack's (the sandbox's own close removes it)."""

    def __init__(self, factory: DockerFactory) -> None:
        self.factory = factory

    def acquire(self, made: Any, *, run_id: str) -> Any:
        sandbox = self.factory.acquire(made, run_id=run_id)
        sandbox.container.kill()
        return sandbox


def test_a_broken_sandbox_is_the_engines_fault(factory: DockerFactory, runtime: str,
                                               docker_client: Any) -> None:
    run_id = f"probe-{uuid.uuid4().hex[:12]}"
    with pytest.raises(SandboxUnavailable):
        run(KillingFactory(factory), runtime, run_id=run_id)
    assert left_over(docker_client, run_id) == []
