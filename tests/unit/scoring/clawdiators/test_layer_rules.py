"""Submission checks with severity, script dimensions, efficiency, constraint violations,
the harness warning, and the superset guarantee (docs/scoring.md §C)."""

from __future__ import annotations

import pytest
from layer_helpers import evaluator_event, layer_spec, manifest_event, run, scores

from evalfleet.scoring import evaluate, trajectory_verified
from evalfleet.scoring.clawdiators.efficiency import call_efficiency, token_efficiency
from evalfleet.scoring.errors import SpecError
from evalfleet.scoring.spec.loading import load_spec

CHECK = {"key": "has_main", "type": "required_files", "paths": ["main.py"],
         "guards": ["correctness"]}


def test_error_check_zeroes_its_dimension_and_says_why() -> None:
    """A failed severity-error check: guarded dimension 0, reason, submission_warnings."""
    spec = layer_spec(["correctness"], {"submission_checks": [CHECK]})
    card = evaluate(spec, [*run("42"), manifest_event(other__py=10)])
    assert card.dimensions["correctness"].score == 0.0
    assert card.dimensions["correctness"].reason == (
        'submission check "has_main" failed: missing required files: main.py')
    assert [(w.severity, w.check) for w in card.submission_warnings] == [("error", "has_main")]
    assert card.score == 0


def test_warning_check_is_advisory() -> None:
    """A failed severity-warning check is reported and changes nothing."""
    spec = layer_spec(["correctness"], {"submission_checks": [{**CHECK, "severity": "warning"}]})
    card = evaluate(spec, [*run("42"), manifest_event(other__py=10)])
    assert card.score == 1000
    assert card.submission_warnings[0].severity == "warning"


@pytest.mark.parametrize(("check", "files", "fails"), [
    ({"type": "forbidden_paths", "paths": ["secrets/*"]}, {"secrets__key": 1}, True),
    ({"type": "forbidden_paths", "paths": ["secrets/*"]}, {"main.py": 1}, False),
    ({"type": "max_files", "limit": 1}, {"a": 1, "b": 1}, True),
    ({"type": "max_file_bytes", "limit": 10}, {"a": 11}, True),
    ({"type": "max_total_bytes", "limit": 10}, {"a": 5, "b": 5}, False),
    ({"type": "required_files", "paths": ["main.py"]}, {"main.py": 3}, False),
])
def test_file_checks(check: dict[str, object], files: dict[str, int], fails: bool) -> None:
    """Each file check passes or fails on the manifest."""
    spec = layer_spec(["correctness"], {"submission_checks": [{"key": "c", **check}]})
    card = evaluate(spec, [*run("42"), manifest_event(**files)])
    assert bool(card.submission_warnings) is fails


def test_output_schema_check() -> None:
    """``output_json_schema`` validates the final output."""
    schema = {"type": "object", "required": ["answer"]}
    spec = layer_spec(["correctness"], {"submission_checks": [
        {"key": "shape", "type": "output_json_schema", "schema": schema,
         "guards": ["correctness"]}]})
    assert evaluate(spec, run('{"answer": 1}')).submission_warnings == []
    assert "does not match" in evaluate(spec, run("42")).submission_warnings[0].message


def test_file_check_without_manifest_is_a_warning_only() -> None:
    """No manifest: the check is not run, says so, and zeroes nothing."""
    spec = layer_spec(["correctness"], {"submission_checks": [CHECK]})
    card = evaluate(spec, run("42"))
    assert card.score == 1000
    assert card.submission_warnings[0].message.startswith("not checked")


EVALUATOR = {"runtime": "python", "script": "print(1)"}
SCRIPT_DIMS = [{"key": "quality", "source": "script"},
               {"key": "style", "source": "script", "score_key": "lint"}]


def test_script_dimensions_read_the_last_scores_line() -> None:
    """0–1000 scores, ``score_key``, the last JSON line with ``scores`` wins."""
    spec = layer_spec(SCRIPT_DIMS, {"evaluator": EVALUATOR})
    out = "\n".join([scores(quality=1, lint=1), "noise", scores(quality=800, lint=250)])
    card = evaluate(spec, [*run(), evaluator_event(out)])
    assert (card.dimensions["quality"].score, card.dimensions["style"].score) == (0.8, 0.25)


def test_script_scale_one() -> None:
    """With ``score_scale: 1`` a 0–1 score is taken as it is."""
    spec = layer_spec(SCRIPT_DIMS, {"evaluator": {**EVALUATOR, "score_scale": 1}})
    card = evaluate(spec, [*run(), evaluator_event(scores(quality=0.5, lint=1))])
    assert card.dimensions["quality"].score == 0.5


@pytest.mark.parametrize(("event", "reason"), [
    (None, "the evaluator did not run"),
    (evaluator_event("", exit_code=None, error="python3: not found"),
     "the evaluator could not run: python3: not found"),
    (evaluator_event("", timed_out=True, exit_code=None), "Evaluation timed out after 60s"),
])
def test_an_evaluator_that_did_not_run_is_an_error(event: object, reason: str) -> None:
    """The pack's or the fleet's failure — no evaluator, one that could not start, one that
    never finished (issue 19) — ``error`` + reason, the run invalid (no contest)."""
    spec = layer_spec(SCRIPT_DIMS, {"evaluator": EVALUATOR})
    card = evaluate(spec, [*run(), *([event] if event else [])])
    assert (card.dimensions["quality"].state, card.dimensions["quality"].reason) == (
        "error", reason)
    assert card.validity == "invalid" and card.result is None


@pytest.mark.parametrize(("event", "reason"), [
    (evaluator_event("Traceback...", exit_code=1, stderr="ZeroDivisionError: x"),
     "Evaluator output did not contain a JSON line with 'scores' key (exit code 1); "
     "stderr: ZeroDivisionError: x"),
    (evaluator_event(scores(lint=5)), 'evaluator scores have no "quality"'),
    (evaluator_event(scores(quality=-1, lint=5)), 'evaluator score "quality" is negative: -1'),
    (evaluator_event(scores(quality="x", lint=5)),
     "evaluator score \"quality\" is not a finite number: 'x'"),
    (evaluator_event(f"{scores(quality=1000, lint=1000)}\n" + "x" * 100, truncated=True,
                     exit_code=137),
     "the evaluator's output passed its cap, so its last scores line could be text it "
     "printed, not its scores"),
])
def test_an_evaluator_that_ran_and_gave_nothing_usable_scores_0(event: object,
                                                                reason: str) -> None:
    """Crash, nothing printed, missing/negative/non-numbers: the evaluator read the
    candidate's files, which can be shaped to break it (``answer.json`` = ``[]``, a score
    driven to NaN); as an ``error`` the run was invalid and a loss became no result (a
    red-team pass: cipher-forge-lite 204 -> null). The dimension scores 0, with the reason."""
    spec = layer_spec(SCRIPT_DIMS, {"evaluator": EVALUATOR})
    card = evaluate(spec, [*run(), event])
    assert (card.dimensions["quality"].state, card.dimensions["quality"].reason) == (
        "available", f"scored 0: {reason}")
    assert card.dimensions["quality"].score == 0.0
    assert card.validity == "valid" and card.result == "loss"


def test_script_source_needs_an_evaluator() -> None:
    """A ``script`` dimension without ``clawdiators.evaluator`` fails the load."""
    with pytest.raises(SpecError, match="evaluator is required when source is script"):
        load_spec(layer_spec(SCRIPT_DIMS).model_dump(by_alias=True))


def test_efficiency_formulas() -> None:
    """Token: max(0, 1 − t/budget). Calls: (5, 3, 10) ≈ 0.714 and (9, 3, 15) = 0.5 (§C3)."""
    assert token_efficiency(250, 1000) == 0.75 and token_efficiency(2000, 1000) == 0.0
    assert round(call_efficiency(5, 3, 10), 3) == 0.714
    assert call_efficiency(9, 3, 15) == 0.5 and call_efficiency(2, 3, 15) == 1.0


EFFICIENCY = [{"key": "tokens", "source": "token_efficiency", "efficiency": {"budget": 1000}},
              {"key": "calls", "source": "call_efficiency",
               "efficiency": {"optimal": 3, "max": 10}}]


def test_efficiency_from_a_verified_trajectory() -> None:
    """Verified trajectory: 5 calls ⇒ 714 points; 250 tokens of 1000 ⇒ 750."""
    card = evaluate(layer_spec(EFFICIENCY), run(calls=5, tokens=(150, 100)))
    assert card.score_breakdown["calls"].score == 714
    assert card.score_breakdown["tokens"].score == 750
    assert card.harness_warning is None


@pytest.mark.parametrize("tokens", [(-1_000_000, 100), (150, -1_000_000)])
def test_a_negative_token_count_scores_zero_never_past_1000(tokens: tuple[int, int]) -> None:
    """The trajectory's counts are the agent's own: a negative one (which scored
    1 − tokens/budget, e.g. 200.97 and a run of 20,186 points) scores 0, with the reason."""
    card = evaluate(layer_spec(EFFICIENCY), run(calls=5, tokens=tokens))
    assert card.dimensions["tokens"].score == 0.0
    assert "negative token count" in card.dimensions["tokens"].reason
    assert card.score is not None and 0 <= card.score <= 1000


def test_efficiency_without_trajectory_scores_zero_and_warns() -> None:
    """No trajectory: both 0 (not unavailable) and a harness_warning."""
    card = evaluate(layer_spec(EFFICIENCY), run())
    assert card.dimensions["tokens"].state == "available"
    assert (card.dimensions["tokens"].score, card.dimensions["calls"].score) == (0.0, 0.0)
    assert card.harness_warning and card.harness_warning.startswith("no agent trajectory")


def test_trajectory_outside_the_window_is_unverified() -> None:
    """A step more than 5 s after the run ended is not verified."""
    events = run(seconds=2.0, calls=1, tokens=(10, 10))
    events[1]["occurred_at"] = "2026-01-01T00:00:30+00:00"
    card = evaluate(layer_spec(EFFICIENCY), events)
    assert card.dimensions["tokens"].score == 0.0
    assert "outside the run's time window" in (card.harness_warning or "")


def test_constraint_violations_are_reported_not_scored() -> None:
    """Time, tokens and LLM calls over their limits; the score is unchanged."""
    limits = {"max_duration_ms": 5000, "max_total_tokens": 100, "max_llm_calls": 2,
              "max_tool_calls": 10}
    spec = layer_spec(["correctness"], {"constraints": limits})
    card = evaluate(spec, run(seconds=6.0, calls=3, tokens=(90, 30)))
    assert [v.message for v in card.constraint_violations] == [
        "max_duration_ms exceeded: 6000 > 5000", "max_total_tokens exceeded: 120 > 100",
        "max_llm_calls exceeded: 3 > 2"]
    assert card.score == 1000


def test_run_model_call_count_collector() -> None:
    """``run_model_call_count`` counts model.call.completed events."""
    spec = layer_spec(["correctness"], metrics=[
        {"key": "calls", "type": "numeric", "collector": "run_model_call_count"}])
    card = evaluate(spec, run(calls=4, tokens=(4, 4)))
    assert card.metric_details[0].numeric_value == 4


def test_plain_agentclash_spec_has_empty_layer_fields() -> None:
    """A spec without the layer: no warnings, violations or harness warning."""
    spec = layer_spec(["correctness"])
    spec.clawdiators = None
    card = evaluate(spec, run("42"))
    assert (card.submission_warnings, card.constraint_violations, card.harness_warning) == (
        [], [], None)


def test_tokens_that_sum_to_nan_break_the_token_constraint() -> None:
    """1e308 and -1e308 tokens a call sum to NaN, which no comparison finds over a limit:
    it is reported as over it (found by a red-team pass)."""
    events = run(seconds=1.0, calls=2, tokens=(2, 2))
    for event in events:
        if event["type"] == "model.call.completed":
            event["payload"]["usage"] = {"input_tokens": 1e308, "output_tokens": -1e308}
    spec = layer_spec(["correctness"], {"constraints": {"max_total_tokens": 100}})
    card = evaluate(spec, events)
    assert [v.message for v in card.constraint_violations] == [
        "max_total_tokens exceeded: nan > 100"]


@pytest.mark.parametrize(("events", "verified"), [
    (run(calls=2, tokens=(10, 10)), True),
    (run(), False),
    ([], False),
    ([{**e, "occurred_at": "2026-01-01T00:00:30+00:00"} if e["type"] == "model.call.completed"
      else e for e in run(seconds=2.0, calls=1)], False),
])
def test_trajectory_verified_is_the_layers_reading(events: list[dict[str, object]],
                                                   verified: bool) -> None:
    """``scoring.trajectory_verified``: a trajectory within the run's window is verified;
    none, or a step outside it, is not (§C4), whatever the spec."""
    assert verified == trajectory_verified(events)
