"""n_wise judges in the fleet: a request's peer runs are ranked with it, over real HTTP."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import SecretStr

from evalfleet.sandbox.profile import Profile
from evalfleet.sandbox.testing.fake import FakeFactory
from evalfleet.tasks.devtools.judge_stub import Answer, StubJudgeServer
from evalfleet.tasks.evaluation.judging import JudgingConfig, ProviderEndpoint
from evalfleet.tasks.evaluation.pipeline import PipelineConfig, ProfileBounds, run_pipeline

PACK: dict[str, Any] = {
    "pack": {"slug": "ranked"},
    "version": {"evaluation_spec": {
        "name": "ranked", "version_number": 1, "judge_mode": "hybrid",
        "validators": [{"key": "said", "type": "contains", "target": "final_output",
                        "expected_from": "literal:"}],
        "llm_judges": [{"key": "best", "mode": "n_wise", "prompt": "Which reply is kindest?",
                        "model": "gpt-4o", "samples": 1, "context_from": ["final_output"]}],
        "scorecard": {"dimensions": [{"key": "rank", "source": "llm_judge",
                                      "judge_key": "best"}]}}},
}


@pytest.fixture
def stub() -> Iterator[StubJudgeServer]:
    server = StubJudgeServer().start()
    yield server
    server.stop()


def run(stub: StubJudgeServer, peers: list[dict[str, Any]], **policy: Any) -> Any:
    judging = JudgingConfig(endpoints={"openai": ProviderEndpoint(
        "openai", stub.url + "/v1", SecretStr("sk-test"))}, backoff_s=0.01, **policy)
    config = PipelineConfig(profiles={"default": ProfileBounds(Profile("default", "fake"))},
                            judging=judging)
    body = {"run_id": "me", "pack": PACK, "peers": peers,
            "submission": {"commands": [{"run": "echo thank you kindly"}]}}
    return run_pipeline(body, FakeFactory(), config)


def test_the_run_is_ranked_among_its_peers(stub: StubJudgeServer) -> None:
    """Three candidates in one prompt; ranked second of three ⇒ Borda (3−1−1)/(3−1) = 0.5."""
    stub.script = [Answer(text=json.dumps({"ranking": ["peer-a", "me", "peer-b"]}))]
    result = run(stub, [{"run_id": "peer-a", "final_output": "warmest thanks"},
                        {"run_id": "peer-b", "final_output": "ok"}])

    prompt = stub.requests[0].message
    assert all(text in prompt for text in ("thank you kindly", "warmest thanks", "ok"))
    assert result.scorecard.dimensions["rank"].score == 0.5
    assert result.scorecard.score == 500


def test_a_peer_without_the_judged_evidence_is_left_out(stub: StubJudgeServer) -> None:
    """A peer whose context cannot be resolved is not ranked, and the run is ranked among
    the others: another submitter's run cannot take this run's judge away (AgentClash
    makes the judge unavailable; found by a red-team pass)."""
    stub.script = [Answer(text=json.dumps({"ranking": ["me", "peer-b"]}))]
    result = run(stub, [{"run_id": "peer-a", "events": []},
                        {"run_id": "peer-b", "final_output": "ok"}])

    assert len(stub.requests) == 1 and "peer-a" not in stub.requests[0].message
    assert result.scorecard.dimensions["rank"].score == 1.0


def test_with_no_peer_carrying_the_evidence_the_judge_is_unavailable(
        stub: StubJudgeServer) -> None:
    """No peer left to rank against: no call is sent, and the reason names the first."""
    result = run(stub, [{"run_id": "peer-a", "events": []}])

    assert stub.requests == []
    dimension = result.scorecard.dimensions["rank"]
    assert dimension.state == "unavailable"
    assert "judge context unavailable for run agent peer-a" in dimension.reason


def test_alone_an_n_wise_judge_is_unavailable(stub: StubJudgeServer) -> None:
    """With no peers there is nothing to rank against (AgentClash's own reason)."""
    result = run(stub, [])

    assert "require at least two run agents" in result.scorecard.dimensions["rank"].reason


@pytest.mark.parametrize("peers", [
    [{"run_id": "peer-a", "final_output": "warmest thanks"}],
    [{"run_id": "peer-a", "events": []}],
])
def test_a_stored_ranking_rescores_offline_without_peers_or_calls(
        stub: StubJudgeServer, peers: list[dict[str, Any]]) -> None:
    """The result's events alone rebuild the same scorecard (no peers, no HTTP)."""
    from evalfleet.scoring import evaluate, load_pack

    stub.script = [Answer(text=json.dumps({"ranking": ["me", "peer-a"]}))]
    result = run(stub, peers)
    sent = len(stub.requests)

    again = evaluate(load_pack(PACK).spec, result.events)

    assert again.model_dump() == result.scorecard.model_dump()
    assert len(stub.requests) == sent


def test_a_padded_peer_cannot_push_the_call_past_the_fleets_limit(
        stub: StubJudgeServer) -> None:
    """A peer whose output is padded past the fleet's message limit stopped the judge call
    of every run it was compared with, and each scored 0 (a red-team pass: a win of 1000
    became a draw). Each candidate's evidence now has an equal share of the limit: the call
    is sent, the padded peer cut to its share and said to be cut."""
    stub.script = [Answer(text=json.dumps({"ranking": ["me", "peer-a"]}))]
    result = run(stub, [{"run_id": "peer-a", "final_output": "pad " * 10_000}],
                 max_message_bytes=8192)
    assert len(stub.requests) == 1
    message = stub.requests[0].message
    assert len(message.encode()) <= 8192 and "thank you kindly" in message
    assert "more bytes of this candidate's evidence are not shown" in message
    assert result.scorecard.dimensions["rank"].score == 1.0
