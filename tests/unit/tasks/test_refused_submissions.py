"""A submission whose own files the sandbox cannot hold is the candidate's loss (issue 38
item 1): scored, with the path in the reason, and no sandbox when the host can tell.
Before, the intake took such files, seeding failed, and ``SeedRefused`` escaped the plan
as our bug (``internal_error`` after three deliveries and three sandboxes), or past
``seed_bytes`` as ``infra_error`` at once."""

from __future__ import annotations

from typing import Any

import pytest
from pipeline_support import PACK, request, run

from evalfleet.scoring import evaluate, load_pack
from evalfleet.tasks.messages import RunResult

#: A relative path of 4,088 bytes: with ``/workspace/`` and its NUL, past PATH_MAX.
TOO_DEEP = "/".join(["d" * 200] * 20 + ["f" * 67])


def submitting(files: dict[str, str]) -> dict[str, Any]:
    """A request whose submission would win (it writes 42 and prints it) with ``files``."""
    return request(submission={"files": {"answer.txt": "42", **files},
                               "commands": [{"run": "echo 42"}]})


def assert_lost(result: RunResult, path: str, why: str) -> None:
    """Scored, a loss, the path and the reason in the scorecard; re-scores the same."""
    card = result.scorecard
    assert result.outcome == "scored" and card is not None, result.reason
    assert (card.result, card.score, card.passed) == ("loss", 0, False)
    assert path in card.overall_reason and why in card.overall_reason, card.overall_reason
    assert result.reason == card.overall_reason
    refused = [e for e in result.events if e["type"] == "grader.submission.refused"]
    assert [e["payload"]["reason"] for e in refused] == [card.overall_reason]
    assert result.events[-1]["type"] == "system.run.failed"
    again = evaluate(load_pack(PACK).spec, result.events, [load_pack(PACK).cases[0]])
    assert again.model_dump() == card.model_dump()


def test_the_winning_submission_wins() -> None:
    """The same submission without the odd file: the baseline every case below loses."""
    result, factory = run(submitting({}))
    assert result.scorecard is not None and result.scorecard.result == "win"
    assert len(factory.sandboxes) == 1


@pytest.mark.parametrize(("files", "limits", "path", "why"), [
    ({"n" * 256: "x"}, {}, "n" * 256, "has a name of 256 bytes"),
    ({TOO_DEEP: "x"}, {}, TOO_DEEP[:300], "is a path of 4099 bytes"),
    ({"lib": "x", "lib/util.py": "y"}, {}, "`lib/util.py` lies below `lib`, a file",
     "would be both a file and a directory"),
    ({"lib/util.py": "y", "lib": "x"}, {}, "`lib` would be both", "`lib/util.py` lies below"),
    ({"a/b": "1", "a/c": "2"}, {"seed_files": 3}, "`a/c`", "the profile's seed_files"),
    ({"big.bin": "x" * 100}, {"seed_bytes": 64}, "`big.bin`", "the profile's seed_bytes"),
    ({"big.bin": "x" * 100}, {"fsize_bytes": 64}, "`big.bin`", "(fsize_bytes)"),
])
def test_files_the_sandbox_cannot_hold_lose_before_any_sandbox(
        files: dict[str, str], limits: dict[str, int], path: str, why: str) -> None:
    result, factory = run(submitting(files), **limits)
    assert_lost(result, path, why)
    assert result.scorecard is not None
    assert result.scorecard.overall_reason.startswith(
        "the sandbox cannot hold the submission: file `")
    assert factory.sandboxes == []
    assert result.resources["sandbox_id"] == ""


def test_a_workspace_found_full_while_seeding_loses_too() -> None:
    """What the host cannot tell (here the workspace smaller than the submission's files):
    the sandbox refuses the seeding, the plan ends there, and the candidate loses."""
    result, factory = run(submitting({"big.bin": "x" * 400}), workspace_bytes=300)
    assert_lost(result, "", "the sandbox could not write the submission's files: no space")
    assert len(factory.sandboxes) == 1 and factory.sandboxes[0].closed
    assert [c.argv for c in factory.sandboxes[0].executed] == []  # "echo 42" never ran
    assert result.resources["commands_skipped"] == 1
    assert not [e for e in result.events
                if e["type"].startswith("grader.verification.")]  # no test, no capture


def test_the_files_are_read_as_the_workspace_holds_them() -> None:
    """``./lib`` and ``/workspace/lib/b`` are ``lib`` and ``lib/b``: they clash."""
    result, factory = run(submitting({"./lib": "x", "/workspace/lib/b": "y"}))
    assert_lost(result, "`/workspace/lib/b` lies below `./lib`", "a file")
    assert factory.sandboxes == []
