"""The run pipeline against the in-memory sandbox: rejections, limits, events, scoring."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from sandbox.profile import Limits, Profile
from sandbox.results import ExecResult
from sandbox.testing.fake import FakeFactory
from scoring import evaluate, load_pack, load_spec
from scoring.run.dimensions import NOT_A_NUMBER
from tasks.budgets import exceeded
from tasks.messages import RunResult, cap_size
from tasks.pipeline import PipelineConfig, ProfileBounds, run_pipeline
from workers.devtools import sandbox_free

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


def _deep(levels: int) -> dict[str, Any]:
    nested: dict[str, Any] = {}
    for _ in range(levels):
        nested = {"x": nested}
    return nested


def _with_pack(change: Any) -> dict[str, Any]:
    body = request()
    change(body["pack"])
    return body


def _text_payload(payload: str) -> dict[str, Any]:
    """A request whose one event's payload is JSON text (AgentClash's wire allows it)."""
    return request(submission={"events": [{"type": "tool.call.completed", "payload": payload}]})


REJECTIONS = [
    ("not-json", "{nope", "request", "invalid JSON"),
    ("unknown-field", request(colour="red"), "request.colour", 'unknown field "colour"'),
    ("no-pack", {"run_id": "r"}, "request", "exactly one of pack or pack_ref"),
    ("bad-run-id", request(run_id="no spaces"), "request.run_id", "should match pattern"),
    ("spec-error", _with_pack(lambda p: p["version"]["evaluation_spec"].update(name="")),
     "pack.version.evaluation_spec.name", "is required"),
    ("unknown-ref", {"run_id": "r", "pack_ref": "nope"}, "request.pack_ref",
     'names no registered pack "nope"'),
    ("no-such-case", request(case_key="c9"), "request.case_key", 'no case "c9" in the pack'),
    ("unknown-profile", _with_pack(lambda p: p["version"]["sandbox"].update(profile="gpu")),
     "pack.version.sandbox.profile", 'names no registered profile "gpu"'),
    ("network", _with_pack(lambda p: p["version"]["sandbox"].update(network_access=True)),
     "pack.version.sandbox.network_access", "needs a profile that allows egress"),
    ("collision", request(submission={"files": {"README.md": "mine"}}),
     "request.submission.files.README.md", "collides with a file of the pack"),
    ("bad-base64", request(submission={"files": {"a.bin": {"content": "!!", "encoding":
                                                           "base64"}}}),
     "request.submission.files.a.bin", "invalid base64"),
    ("too-large", json.dumps(request(metadata={"pad": "x" * 9 * MiB})), "request",
     "is larger than"),
    ("collision-spelled-otherwise", request(submission={"files": {"./README.md": "mine"}}),
     "request.submission.files../README.md", "collides with a file of the pack"),
    # A path the workspace cannot hold was an infra_error (the fleet's failure, retried).
    ("path-up", request(submission={"files": {"../x": ""}}), "request.submission.files.../x",
     "'..' component"),
    ("path-elsewhere", request(submission={"files": {"/tmp/x": ""}}),
     "request.submission.files./tmp/x", "not a file inside /workspace"),
    ("path-empty", request(submission={"files": {"": ""}}), "request.submission.files.",
     "bad path"),
    # Both failed the run when its result was written: internal_error, retried 3 times.
    ("lone-surrogate", request(submission={"final_output": "a\ud800b"}),
     "request.submission.final_output", "lone surrogate"),
    ("lone-surrogate-key", request(metadata={"\udc80": 1}), "request.metadata",
     "lone surrogate"),
    ("nan", '{"run_id": "r", "pack_ref": "p", "submission": {"events": [{"type": "x", '
            '"payload": {"usage": {"input_tokens": NaN}}}]}}',
     "request.submission.events[0].payload.usage.input_tokens", "finite"),
    ("minus-infinity", '{"run_id": "r", "pack_ref": "p", "metadata": {"x": [-Infinity]}}',
     "request.metadata.x[0]", "finite"),
    # A step of 10^400 ms raised OverflowError in scoring: internal_error, retried 3 times.
    ("past-float64", '{"run_id": "r", "pack_ref": "p", "submission": {"events": [{"type": '
                     '"system.step.completed", "payload": {"step_index": 1, "duration_ms": 1'
                     + "0" * 400 + '}}]}}',
     "request.submission.events[0].payload.duration_ms", "beyond float64's range"),
    # 400 levels of a tool call's arguments overflowed scoring's recursion: internal_error.
    ("deep-event", request(submission={"events": [{"type": "tool.call.completed",
                                                   "payload": {"arguments": _deep(400)}}]}),
     "request.submission.events[0].payload.arguments" + ".x" * 60, "more than 64 levels"),
    # The same three, in a payload sent as JSON text (decoded after the checks, it passed
    # them, and scoring raised: RecursionError, OverflowError, UnicodeEncodeError).
    ("deep-text-payload", _text_payload('{"tool_name": "t", "arguments": ' + "[" * 500
                                        + "]" * 500 + "}"),
     "request.submission.events[0].payload.arguments" + "[0]" * 60, "more than 64 levels"),
    ("huge-text-payload", _text_payload('{"tool_name": "t", "arguments": {"a": 1'
                                        + "0" * 400 + "}}"),
     "request.submission.events[0].payload.arguments.a", "beyond float64's range"),
    ("surrogate-text-payload", _text_payload('{"final_output": "x\\ud800"}'),
     "request.submission.events[0].payload.final_output", "lone surrogate"),
]


@pytest.mark.parametrize(("body", "field", "message"), [r[1:] for r in REJECTIONS],
                         ids=[r[0] for r in REJECTIONS])
def test_bad_requests_are_rejected_before_any_sandbox(body: Any, field: str,
                                                      message: str) -> None:
    """A request that cannot succeed is a rejected result naming the field; no container."""
    result, factory = run(body)

    assert result.outcome == "rejected"
    assert factory.sandboxes == []
    assert any(p.field == field and message in p.message for p in result.errors), result.errors


def test_network_access_runs_on_an_egress_profile() -> None:
    """A pack that needs the network runs on a profile the operator marked for egress."""
    body = _with_pack(lambda p: p["version"]["sandbox"].update(network_access=True,
                                                               profile="egress"))
    result, factory = run(body)

    assert result.outcome == "scored"
    assert factory.sandboxes[0].profile.name == "egress"
    assert factory.sandboxes[0].profile.hardening.network_mode == "bridge"


def test_packs_without_network_access_get_no_network_even_on_an_egress_profile() -> None:
    """Egress is opt-in per pack: the egress profile alone does not open the network."""
    body = _with_pack(lambda p: p["version"]["sandbox"].update(profile="egress"))
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


def test_a_result_past_its_size_with_a_text_payload_is_published_slimmed() -> None:
    """Found by a red-team pass: an event whose payload was JSON text was kept as text,
    and slimming a result past its size (here three failed commands' outputs of control
    bytes, six characters each in JSON) raised on it in every delivery: the run void.
    The payload is kept decoded now, and the result is slimmed."""
    noisy = ExecResult(exit_code=1, stdout=b"\x01" * (MiB - 1), stderr=b"\x01" * (MiB - 1))
    body = request(submission={
        "files": {"answer.txt": "41"}, "commands": [{"run": f"noise{i}"} for i in range(3)],
        "events": [{"type": "system.run.completed", "payload": '{"final_output": "41"}'}]})
    factory = FakeFactory(script={"run-tests 7": TESTS_PASS,
                                  **{f"noise{i}": noisy for i in range(3)}})
    result = run_pipeline(body, factory, config())
    assert result.outcome == "scored" and result.dropped == ["event output texts"]
    assert result.events[0]["payload"] == {"final_output": "41"}
    assert len(result.to_json().encode()) <= config().max_result_bytes


def test_a_result_is_capped_by_its_utf8_bytes() -> None:
    """A result under the cap in characters but over it in bytes is slimmed."""
    text = "é" * 3000  # 3,000 characters, 6,000 bytes
    result = RunResult(run_id="r", outcome="scored",
                       events=[{"type": "x", "payload": {"stdout": text}}])
    size = len(result.to_json())
    assert cap_size(result, size + 100).dropped == ["event output texts"]
    assert cap_size(result, 2 * size).dropped == []


def _model_call(input_tokens: float, output_tokens: float) -> dict[str, Any]:
    return {"type": "model.call.completed", "payload": {
        "provider_key": "openai", "provider_model_id": "gpt-x",
        "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens}}}


def test_token_counts_that_sum_to_nan_score_0_and_break_the_budget() -> None:
    """Found by a red-team pass: 1e308 and -1e308 tokens (finite, so the intake takes
    them) sum to inf and -inf, and the run's total to NaN, which made scoring raise in
    every delivery (the run void) and passed every token budget. The efficiency
    dimension scores 0, and a budget sees NaN as over it."""
    pack = yaml.safe_load((EXAMPLES / "invoice-json" / "pack.yaml").read_text())
    events = [{"type": "system.run.completed", "payload": {"final_output": "I don't know"}},
              _model_call(1e308, -1e308), _model_call(1e308, -1e308)]
    body = {"run_id": "r-nan", "pack": pack, "case_key": "acme",
            "submission": {"events": events}}
    result = run_pipeline(body, FakeFactory(), config())
    assert result.outcome == "scored" and result.scorecard is not None, result.reason
    efficiency = result.scorecard.dimensions["token_efficiency"]
    assert (efficiency.score, efficiency.reason) == (0.0, f"scored 0: {NOT_A_NUMBER}")
    assert result.scorecard.result == "loss"
    budget = {"max_total_tokens": 1000}
    spec = load_spec({**pack["version"]["evaluation_spec"], "runtime_limits": budget})
    assert exceeded(spec, events) == "run used nan tokens, over max_total_tokens 1000"


@pytest.mark.parametrize("number", ["100", 100.0])
def test_the_fleets_events_come_after_a_sequence_number_written_otherwise(number: Any) -> None:
    """Scoring reads ``"100"`` and ``100.0`` as 100; the fleet's own events (its captures,
    tests and commands) are numbered after it, never before."""
    events = [{"type": "system.run.completed", "sequence_number": number,
               "payload": {"final_output": "42"}}]
    result, _ = run(request(submission={"files": {"answer.txt": "42"}, "events": events}))
    ours = [e["sequence_number"] for e in result.events[1:]]
    assert ours and min(ours) == 101, result.events
