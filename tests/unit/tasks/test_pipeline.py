"""The run pipeline against the in-memory sandbox: limits, events, profiles, scoring."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from pipeline_support import (
    PACK,
    MiB,
    config,
    request,
    run,
    with_pack,
)

from evalfleet.sandbox.profile import Profile
from evalfleet.sandbox.testing.fake import FakeFactory
from evalfleet.scoring import evaluate, load_pack
from evalfleet.tasks.evaluation.pipeline import PipelineConfig, ProfileBounds, run_pipeline
from evalfleet.workers.devtools import sandbox_free


def test_a_passing_submission_is_scored() -> None:
    """Files are seeded, commands run, tests and captures feed the scorecard."""
    result, factory = run(request())

    assert result.outcome == "scored"
    card = result.scorecard
    assert card is not None
    assert {d.key: d.verdict for d in card.validator_details} == {
        "says_42": "pass", "file_42": "pass", "tests": "pass"}
    assert (card.score, card.result) == (1000, "win")
    assert result.metadata == {"team": "blue"}
    assert factory.sandboxes[0].closed


def test_the_placeholder_is_rendered_from_the_case() -> None:
    """``{{ n }}`` in a test command is rendered from the case payload."""
    result, _ = run(request())

    executed = [e for e in result.events if e["type"] == "grader.verification.code_executed"]
    assert executed[0]["payload"]["test_command"] == "run-tests 7"
    assert executed[0]["payload"]["passed_tests"] == 3


def test_a_failing_command_is_a_scored_candidate_failure() -> None:
    """A candidate command that fails is evidence (sandbox.command.failed), not an error."""
    body = request(submission={"files": {"answer.txt": "41"}, "commands": [{"run": "false"}]})
    result, _ = run(body)

    assert result.outcome == "scored"
    assert any(e["type"] == "sandbox.command.failed" for e in result.events)
    card = result.scorecard
    assert card is not None
    assert card.dimensions["reliability"].score == 0.0
    assert card.validity == "valid"


def test_the_result_can_be_rescored_offline() -> None:
    """The result's events re-score to the same scorecard without a sandbox."""
    result, _ = run(request())
    pack = load_pack(copy.deepcopy(PACK))

    again = evaluate(pack.spec, result.events, pack.cases)

    assert result.scorecard is not None
    assert again.model_dump() == result.scorecard.model_dump()


def test_wall_limit_is_the_smallest_of_request_pack_and_operator() -> None:
    """The spec's max_duration_ms (3 s) beats the request (5 s) and the operator (600 s)."""
    result, _ = run(request(time_limit_ms=5000))

    assert result.resources["limits"]["wall_timeout_s"] == 3.0


def test_request_overrides_can_lower_but_never_raise_limits() -> None:
    """Memory above the operator's ceiling is clamped; below it is kept."""
    raised, _ = run(request(sandbox={"memory_mb": 4096}), memory_bytes=256 * MiB)
    lowered, _ = run(request(sandbox={"memory_mb": 64}), memory_bytes=256 * MiB)

    assert raised.resources["limits"]["memory_bytes"] == 256 * MiB
    assert lowered.resources["limits"]["memory_bytes"] == 64 * MiB


def test_supplied_events_tell_the_run_story() -> None:
    """With agent events, the worker adds only sandbox and grader events."""
    events = [{"type": "system.run.started", "sequence_number": 1,
               "occurred_at": "2026-01-01T00:00:00Z", "payload": {}},
              {"type": "system.run.completed", "sequence_number": 2,
               "occurred_at": "2026-01-01T00:00:01Z", "payload": {"final_output": "42"}}]
    body = request(submission={"files": {"answer.txt": "42"}, "events": events})
    result, _ = run(body)

    types = [e["type"] for e in result.events]
    assert types.count("system.run.started") == 1
    assert [e["sequence_number"] for e in result.events] == list(range(1, len(types) + 1))


EVENTS_ONLY = sandbox_free.PACK


def test_a_plan_with_nothing_to_execute_acquires_no_sandbox() -> None:
    """A pack scoring only the submitted events: scored as before, no sandbox acquired,
    and the result says none served it."""
    body = request(pack=copy.deepcopy(EVENTS_ONLY),
                   submission={"events": copy.deepcopy(sandbox_free.EVENTS)})
    result, factory = run(body)

    assert result.scorecard is not None
    assert (result.scorecard.result, result.scorecard.score) == ("win", 1000)
    assert factory.sandboxes == []
    assert result.resources["sandbox_id"] == ""
    assert "system.run.failed" not in [e["type"] for e in result.events]


def test_a_plan_with_a_command_still_acquires_a_sandbox() -> None:
    """The same pack with one submitted command runs it in a sandbox."""
    body = request(pack=copy.deepcopy(EVENTS_ONLY), submission={"commands": [{"run": "echo 42"}]})
    result, factory = run(body)

    assert len(factory.sandboxes) == 1
    assert result.scorecard is not None and result.scorecard.result == "win"


def test_token_budget_exceeded_ends_the_run_as_failed() -> None:
    """Events reporting more tokens than max_total_tokens end in system.run.failed."""
    events = [{"type": "system.run.completed", "sequence_number": 1,
               "occurred_at": "2026-01-01T00:00:01Z",
               "payload": {"final_output": "42", "total_tokens": 5000}}]
    result, _ = run(request(submission={"files": {"answer.txt": "42"}, "events": events}))

    failed = [e for e in result.events if e["type"] == "system.run.failed"]
    assert "5000 tokens, over max_total_tokens 1000" in failed[0]["payload"]["reason"]
    assert result.scorecard is not None
    assert result.scorecard.dimensions["reliability"].score == 0.0


def test_network_access_runs_on_an_egress_profile() -> None:
    """A pack that needs the network runs on a profile the operator marked for egress."""
    body = with_pack(lambda p: p["version"]["sandbox"].update(network_access=True,
                                                               profile="egress"))
    result, factory = run(body)

    assert result.outcome == "scored"
    assert factory.sandboxes[0].profile.name == "egress"
    assert factory.sandboxes[0].profile.hardening.network_mode == "bridge"


def test_packs_without_network_access_get_no_network_even_on_an_egress_profile() -> None:
    """Egress is opt-in per pack: the egress profile alone does not open the network."""
    body = with_pack(lambda p: p["version"]["sandbox"].update(profile="egress"))
    _, factory = run(body)

    assert factory.sandboxes[0].profile.hardening.network_mode == "none"


def test_a_rejected_request_keeps_its_run_id_and_metadata() -> None:
    """Rejections are published under the request's own run id with its metadata."""
    result, _ = run(request(colour="red"))

    assert (result.run_id, result.metadata) == ("run-1", {"team": "blue"})


@pytest.mark.parametrize(("where", "field"), [
    ("request", "request.runtime"), ("overrides", "request.sandbox.runtime"),
    ("pack", "pack.version.sandbox.runtime")])
def test_a_runtime_named_by_a_request_or_a_pack_is_rejected(where: str, field: str) -> None:
    """The sandbox's runtime (gVisor or runc) is the operator's: a request or a pack that
    names one, even as null, is rejected with the key's path, before any sandbox starts."""
    body = request()
    if where == "request":
        body["runtime"] = "runc"
    elif where == "overrides":
        body["sandbox"] = {"runtime": None}
    else:
        body["pack"]["version"]["sandbox"]["runtime"] = "runc"
    factory = FakeFactory()
    result = run_pipeline(json.dumps(body), factory, config())
    assert result.outcome == "rejected" and factory.sandboxes == []
    assert [(e.field, "operator's" in e.message) for e in result.errors] == [(field, True)]


def test_the_result_records_the_runtime_and_why_usage_is_missing() -> None:
    """resources.runtime is the profile's runtime; a driver that measures nothing gives
    ``usage: null`` and the reason."""
    bounds = ProfileBounds(Profile(name="default", image="fake", runtime="runsc"))
    result = run_pipeline(json.dumps(request()), FakeFactory(),
                          PipelineConfig(profiles={"default": bounds}))
    assert result.resources["runtime"] == "runsc"
    assert result.resources["usage"] is None
    assert "does not measure" in result.resources["usage_unavailable"]


def test_a_preflight_run_tells_every_step_its_index() -> None:
    """``check_run`` reaches the profile's env (tests, evaluator) and every command's env as
    EVALFLEET_CHECK_RUN; the pack's own env_vars cannot forge or hide it."""
    body = request(check_run=3)
    body["pack"]["version"]["sandbox"]["env_vars"] = {"EVALFLEET_CHECK_RUN": "9", "LANG": "C"}
    result, factory = run(body)

    sandbox = factory.sandboxes[0]
    assert result.outcome == "scored"
    assert dict(sandbox.profile.env) == {"EVALFLEET_CHECK_RUN": "3", "LANG": "C"}
    commands = [c for c in sandbox.executed if c.env and c.user is None]  # the candidate's
    assert [c.env.get("EVALFLEET_CHECK_RUN") for c in commands] == ["3"]


def test_an_ordinary_run_has_no_check_index() -> None:
    """Without ``check_run`` no step sees EVALFLEET_CHECK_RUN, even if the pack sets it."""
    body = request()
    body["pack"]["version"]["sandbox"]["env_vars"] = {"EVALFLEET_CHECK_RUN": "1"}
    _, factory = run(body)

    sandbox = factory.sandboxes[0]
    assert "EVALFLEET_CHECK_RUN" not in sandbox.profile.env
    assert all("EVALFLEET_CHECK_RUN" not in c.env for c in sandbox.executed)


@pytest.mark.parametrize("index", [0, -1, 1001, "two"])
def test_a_check_index_out_of_range_is_rejected(index: Any) -> None:
    """``check_run`` is 1 … 1000; anything else is a rejection naming the field."""
    result, _ = run(request(check_run=index))

    assert result.outcome == "rejected"
    assert [e.field for e in result.errors] == ["request.check_run"]


def _two_sets() -> dict[str, Any]:
    pack = copy.deepcopy(PACK)
    pack["input_sets"] = [
        {"key": "real", "cases": [{"case_key": "c1", "payload": {"n": 7}},
                                  {"case_key": "only-real", "payload": {"n": 7}}]},
        {"key": "eval", "cases": [{"case_key": "c1", "payload": {"n": 7}}]}]
    return pack


@pytest.mark.parametrize(("case_key", "input_set"), [
    ("eval/c1", "eval"), ("real/c1", "real"), ("only-real", "real"),
], ids=["qualified-second-set", "qualified-first-set", "bare-unique"])
def test_every_input_set_is_reachable_by_case_key(case_key: str, input_set: str) -> None:
    """A request reaches any set's case; the result names the set and the case."""
    result, _ = run(request(pack=_two_sets(), case_key=case_key))

    assert result.outcome == "scored"
    assert (result.input_set, result.case_key) == (input_set, case_key.split("/")[-1])


def test_an_ambiguous_case_key_is_rejected_naming_both_sets() -> None:
    """``c1`` is in both sets: a rejection that names them, before any sandbox."""
    result, factory = run(request(pack=_two_sets(), case_key="c1"))

    assert result.outcome == "rejected"
    assert [(e.field, e.message) for e in result.errors] == [
        ("request.case_key", 'case key "c1" is ambiguous: input sets "eval" and "real" both '
                             'have it; use "<input_set>/c1"')]
    assert factory.sandboxes == []


