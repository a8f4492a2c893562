"""A submission that keeps a listing from being whole cannot pass ``forbidden_files``
(issue 38 item 3), through the real sandbox: padding it past its entry cap, making lines
over 8 KiB (dropped once the sandbox's ``head`` had counted them: the listing was not
marked cut), or making it fail (an error the event left out: an empty listing, whole to
scoring). Each fails the check with a reason naming the gap; a whole listing passes."""

from __future__ import annotations

import copy
import uuid
from typing import Any

import pytest
from sandbox_support import left_over, profile

from evalfleet.sandbox.docker.factory import DockerFactory
from evalfleet.tasks.evaluation.pipeline import PipelineConfig, ProfileBounds, run_pipeline

PACK: dict[str, Any] = {
    "pack": {"slug": "listing"},
    "version": {
        "sandbox": {},
        "evaluation_spec": {
            "name": "listing", "version_number": 1, "judge_mode": "deterministic",
            "post_execution_checks": [{"key": "tree", "type": "directory_listing",
                                       "path": "out"}],
            "validators": [{"key": "clean", "type": "directory_structure",
                            "target": "file:tree",
                            "config": {"forbidden_files": ["secret.txt"]}}],
            "scorecard": {"dimensions": ["correctness"]}}},
}
#: Nested directories of 200-byte names, 45 deep: the deepest entries' lines pass 8 KiB.
DEEP = ("python3 -c \"import os\nos.chdir('out')\n"
        "for _ in range(45): os.mkdir('d' * 200); os.chdir('d' * 200)\"")
ABSENT = "forbidden files cannot be shown absent from "


@pytest.mark.parametrize(("command", "reason"), [
    ("mkdir out && touch out/answer.txt", ""),
    ("mkdir out && cd out && seq 1 80 | xargs touch",
     ABSENT + "a listing cut at its entry cap: secret.txt"),
    (f"mkdir out && {DEEP}",
     ABSENT + "a listing that left out 5 entries (their lines were over 8 KiB): secret.txt"),
    ("mkdir out && chmod 000 out",
     ABSENT + "a listing that failed (cannot open directory): secret.txt"),
], ids=["whole", "padded", "long-lines", "failed"])
def test_a_listing_that_is_not_whole_fails_forbidden_files(
        factory: DockerFactory, runtime: str, docker_client: Any, command: str,
        reason: str) -> None:
    run_id = f"listing-{uuid.uuid4().hex[:12]}"
    body = {"run_id": run_id, "pack": copy.deepcopy(PACK),
            "submission": {"commands": [{"run": command}]}}
    config = PipelineConfig(profiles={"default": ProfileBounds(
        profile("python", runtime, listing_entries=50))})

    result = run_pipeline(body, factory, config)

    card = result.scorecard
    assert result.outcome == "scored" and card is not None, result.reason
    clean = card.validator_details[0]
    assert (clean.verdict, clean.reason) == ("pass" if not reason else "fail", reason)
    assert card.result == ("win" if not reason else "loss")
    listed = next(e for e in result.events
                  if e["type"] == "grader.verification.directory_listed")
    assert ("truncated" in listed["payload"] or "error" in listed["payload"]) == bool(reason)
    assert left_over(docker_client, run_id) == []
