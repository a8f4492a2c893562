"""Runs a losing submission shaped to fail after it ran (found by red-team passes): each
is scored, never an exception that voids it."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from pipeline_support import EXAMPLES, TESTS_PASS, MiB, config, request, run

from evalfleet.sandbox.results import ExecResult
from evalfleet.sandbox.testing.fake import FakeFactory
from evalfleet.scoring import load_spec
from evalfleet.scoring.run.dimensions import NOT_A_NUMBER
from evalfleet.tasks.evaluation.budgets import exceeded
from evalfleet.tasks.evaluation.pipeline import run_pipeline
from evalfleet.tasks.messages import RunResult, cap_size


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
