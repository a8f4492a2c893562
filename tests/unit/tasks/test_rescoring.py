"""Re-scoring stored results with today's semantics (``tasks.evaluation.rescoring``, ``evalfleet
rescore``): what moved is listed field by field; what cannot be re-scored says why."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from pipeline_support import PACK, request, run

from evalfleet.scoring import load_pack
from evalfleet.tasks.evaluation.rescoring import Change, rescore, stream_results
from evalfleet.tasks.messages import RunResult
from evalfleet.tasks.redis_keys import RESULTS_STREAM, result_key
from evalfleet.workers.cli import main


def scored(**overrides: Any) -> RunResult:
    """A result scored today (run-1: every validator passes)."""
    result, _ = run(request(**overrides))
    return result


def as_before(stored: RunResult, **card: Any) -> RunResult:
    """The result as an older evalfleet would have stored it (scorecard fields replaced)."""
    assert stored.scorecard is not None
    old = stored.scorecard.model_copy(update=card)
    return stored.model_copy(update={"scorecard": old, "provenance": None})


def test_a_result_scored_today_is_unchanged() -> None:
    """Same events, same pack, same semantics: nothing moves."""
    outcome = rescore(scored(), load_pack(PACK))

    assert (outcome.status, outcome.changes, outcome.notes) == ("unchanged", [], [])


def test_every_moved_field_is_listed_with_its_kind() -> None:
    """Verdict, score, result and text changes, top level and per validator/dimension."""
    today = scored()
    card = today.scorecard
    assert card is not None
    details = [d.model_copy(update={"verdict": "fail", "reason": "actual contains expected"})
               if d.key == "says_42" else d for d in card.validator_details]
    dimensions = dict(card.dimensions)
    dimensions["correctness"] = dimensions["correctness"].model_copy(update={"score": 0.5})
    old = as_before(today, passed=False, score=500, result="draw", overall_reason="weighted: "
                    "overall score 1.0000", validator_details=details, dimensions=dimensions)

    outcome = rescore(old, load_pack(PACK))

    assert outcome.status == "changed"
    assert outcome.changes == [
        Change("passed", "verdict", False, True),
        Change("score", "score", 500, 1000),
        Change("result", "result", "draw", "win"),
        Change("overall_reason", "text", "weighted: overall score 1.0000", ""),
        Change("validator_details[says_42].verdict", "verdict", "fail", "pass"),
        Change("validator_details[says_42].reason", "text", "actual contains expected", ""),
        Change("dimensions[correctness].score", "score", 0.5, 1.0),
    ]
    assert outcome.result is not None and outcome.result.scorecard == today.scorecard
    assert outcome.result.provenance is not None
    assert outcome.result.provenance.pack_hash == load_pack(PACK).content_hash


def test_a_validator_only_one_side_has_is_a_change_from_or_to_none() -> None:
    """A validator the stored card lacks shows up as appearing."""
    today = scored()
    assert today.scorecard is not None
    old = as_before(today, validator_details=today.scorecard.validator_details[1:])

    outcome = rescore(old, load_pack(PACK))

    assert Change("validator_details[says_42].verdict", "verdict", None, "pass") in \
        outcome.changes


def test_a_different_pack_is_noted() -> None:
    """The stored provenance's pack hash is compared with the pack given."""
    changed = copy.deepcopy(PACK)
    changed["version"]["evaluation_spec"]["validators"][0]["expected_from"] = "literal:43"

    outcome = rescore(scored(), load_pack(changed))

    assert outcome.status == "changed"
    assert outcome.notes and outcome.notes[0].startswith("the pack differs from the one scored")
    assert Change("validator_details[says_42].verdict", "verdict", "pass", "fail") in \
        outcome.changes


@pytest.mark.parametrize(("update", "pack", "reason"), [
    ({"outcome": "infra_error", "scorecard": None}, PACK,
     "not a scored result (outcome infra_error)"),
    ({"dropped": ["events"]}, PACK, "its events were cut to fit the size cap (events)"),
    ({}, None, "no pack to score with"),
])
def test_what_cannot_be_rescored_faithfully_is_skipped(update: dict[str, Any],
                                                       pack: Any, reason: str) -> None:
    """Unscored results, cut events and a missing pack are skipped with the reason."""
    outcome = rescore(scored().model_copy(update=update), load_pack(pack) if pack else None)

    assert outcome.status == "skipped"
    assert outcome.reason.startswith(reason)


def test_a_case_the_pack_no_longer_has_is_unscorable() -> None:
    """The stored case key is looked up in today's pack."""
    outcome = rescore(scored().model_copy(update={"case_key": "gone"}), load_pack(PACK))

    assert outcome.status == "unscorable"
    assert "gone" in outcome.reason


class StreamStub:
    """``XRANGE`` over a list of entries and ``MGET`` of result keys, as redis-py answers
    them: an entry names its run (``publish.publication``), the result is its key's."""

    def __init__(self, results: list[RunResult]) -> None:
        self.entries = [(f"{i + 1}-0".encode(), {b"run_id": r.run_id.encode(),
                                                 b"outcome": r.outcome.encode()})
                        for i, r in enumerate(results)]
        self.keys = {result_key(r.run_id): r.to_json().encode() for r in results}
        self.calls: list[str] = []

    def mget(self, keys: list[str]) -> list[bytes | None]:
        return [self.keys.get(key) for key in keys]

    def xrange(self, name: str, min: str, max: str,  # noqa: A002 (redis-py's keywords)
               count: int) -> list[Any]:
        assert (name, max) == (RESULTS_STREAM, "+")
        self.calls.append(min)
        after = min[1:] if min.startswith("(") else None
        rest = self.entries if after is None else \
            [e for e in self.entries if int(e[0].split(b"-")[0]) > int(after.split("-")[0])]
        return rest[:count]


def test_the_stream_is_read_in_pages_without_consuming() -> None:
    """Every entry once, oldest first, paging after the last id seen."""
    results = [scored(run_id=f"run-{i}") for i in range(5)]
    stub = StreamStub(results)

    read = [r.run_id for r in stream_results(stub, batch=2)]

    assert read == [f"run-{i}" for i in range(5)]
    assert stub.calls == ["-", "(2-0", "(4-0"]


def test_a_result_expired_since_its_entry_is_passed_over() -> None:
    results = [scored(run_id=f"run-{i}") for i in range(3)]
    stub = StreamStub(results)
    del stub.keys[result_key("run-1")]

    assert [r.run_id for r in stream_results(stub)] == ["run-0", "run-2"]


def test_the_command_reports_changes_and_writes_what_changed(tmp_path: Path) -> None:
    """Files in, one block per run out; --write keeps the changed results, re-scored."""
    old = as_before(scored(), overall_reason="weighted: overall score 1.0000")
    stored = tmp_path / "results.jsonl"
    stored.write_text(old.to_json() + "\n" + scored(run_id="run-2").to_json() + "\n")
    pack = tmp_path / "pack.json"
    pack.write_text(json.dumps(PACK))
    changed = tmp_path / "changed.jsonl"

    result = CliRunner().invoke(main, ["rescore", str(stored), "--pack", str(pack),
                                       "--format", "json", "--write", str(changed)])

    assert result.exit_code == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(x["run_id"], x["status"]) for x in lines] == [("run-1", "changed"),
                                                           ("run-2", "unchanged")]
    assert lines[0]["changes"] == [{"field": "overall_reason", "kind": "text",
                                    "before": "weighted: overall score 1.0000", "after": ""}]
    assert result.stderr.strip() == "1 changed, 1 unchanged, 0 skipped, 0 unscorable"
    [written] = [RunResult.model_validate_json(x) for x in changed.read_text().splitlines()]
    assert written.run_id == "run-1" and written.scorecard is not None
    assert written.scorecard.overall_reason == ""


def test_the_command_needs_files_or_the_stream(tmp_path: Path) -> None:
    """Neither, or both, is a usage error (exit 2)."""
    result = CliRunner().invoke(main, ["rescore"])

    assert result.exit_code == 2
    assert "give result files, --stream, --archived-match or --archived-day" in result.stderr
