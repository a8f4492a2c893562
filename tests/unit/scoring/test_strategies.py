"""The overall verdict: weighted, binary, hybrid with gates (docs/scoring.md §12)."""

from __future__ import annotations

from typing import Any

import pytest

from evalfleet import scoring
from evalfleet.scoring.run.records import DimensionResult
from evalfleet.scoring.run.strategies import Verdict, decide

GONE, ERR = "unavailable", "error"


def dim(key: str, weight: float | None = None, gate: bool = False,
        threshold: float | None = None) -> dict[str, Any]:
    """A validators-sourced dimension declaration."""
    body: dict[str, Any] = {"key": key, "source": "validators"}
    if weight is not None:
        body["weight"] = weight
    if gate:
        body["gate"] = True
    if threshold is not None:
        body["pass_threshold"] = threshold
    return body


def verdict(strategy: str, dims: list[dict[str, Any]], results: list[float | str],
            pass_threshold: float | None = None) -> Verdict:
    """Decide ``strategy`` over ``dims`` whose results are scores or a state name."""
    scorecard: dict[str, Any] = {"strategy": strategy, "dimensions": dims}
    if pass_threshold is not None:
        scorecard["pass_threshold"] = pass_threshold
    spec = scoring.load_spec({
        "name": "t", "version_number": 1, "judge_mode": "deterministic",
        "validators": [{"key": "v", "type": "exact_match", "target": "final_output",
                        "expected_from": "literal:x"}],
        "scorecard": scorecard})
    dimension_results = [
        DimensionResult(key=d["key"], state=r, reason="why")
        if isinstance(r, str) else DimensionResult(key=d["key"], state="available", score=r)
        for d, r in zip(dims, results, strict=True)]
    return decide(spec, dimension_results)


A, B, G, H = dim("a"), dim("b"), dim("g", gate=True, threshold=0.6), dim("h", gate=True,
                                                                         threshold=0.5)


@pytest.mark.parametrize(("dims", "results", "threshold", "overall", "passed", "reason"), [
    pytest.param([dim("a", 3), dim("b", 1)], [1.0, 0.0], None, 0.75, True, None,
                 id="weighted-mean"),
    pytest.param([dim("a", 2), B], [1.0, 0.0], None, 2 / 3, True, None,
                 id="absent-weight-is-one"),
    pytest.param([dim("a", 0), dim("b", 0)], [1.0, 0.0], None, 0.5, True, None,
                 id="zero-weights-plain-mean"),
    pytest.param([A], [0.7], 0.7, 0.7, True, None, id="threshold-inclusive"),
    pytest.param([A], [0.65], 0.7, 0.65, False,
                 "weighted: overall score 0.6500 below scorecard pass_threshold 0.7000",
                 id="threshold-not-met"),
    pytest.param([A, G], [1.0, 0.5], None, 0.75, False,
                 'weighted: gated dimension "g" below pass_threshold',
                 id="gate-fails-score-unchanged"),
    pytest.param([A, G], [1.0, 0.6], None, 0.8, True, None, id="gate-equal-passes"),
    pytest.param([A, G], [0.4, GONE], None, 0.4, False,
                 'weighted: gated dimension "g" is unavailable', id="gate-unavailable"),
    pytest.param([A, G], [0.4, ERR], None, 0.4, False,
                 'weighted: gated dimension "g" has evaluator error', id="gate-error"),
    pytest.param([dim("a", 3), dim("b", 1)], [GONE, 0.2], None, 0.2, True, None,
                 id="non-required-unavailable-dropped"),
    pytest.param([dim("a", threshold=0.9)], [0.5], None, 0.5, True, None,
                 id="non-gate-threshold-ignored"),
    pytest.param([A, G], [1.0, 0.5], 0.5, 0.75, False,
                 'weighted: gated dimension "g" below pass_threshold',
                 id="gate-failure-beats-met-threshold"),
    pytest.param([A, H, G], [1.0, 0.1, 0.1], None, 0.4, False,
                 'weighted: gated dimension "h" below pass_threshold',
                 id="first-offender-in-declaration-order"),
    pytest.param([A, G, H], [1.0, 0.1, GONE], None, 0.55, False,
                 'weighted: gated dimension "h" is unavailable',
                 id="unavailable-gate-outranks-an-earlier-failing-gate"),
    pytest.param([A, B], [GONE, ERR], None, None, None,
                 "no dimensions produced an available score",
                 id="none-available-no-gate"),
    pytest.param([A, G], [GONE, GONE], 0.5, None, False,
                 'weighted: gated dimension "g" is unavailable', id="none-available-gate"),
])
def test_weighted(dims: list[dict[str, Any]], results: list[float | str],
                  threshold: float | None, overall: float | None, passed: bool | None,
                  reason: str | None) -> None:
    """weighted: mean over every available dim (gates included); gates only lower passed."""
    got = verdict("weighted", dims, results, threshold)
    assert got.overall == (None if overall is None else pytest.approx(overall))
    assert got.passed is passed
    if reason is not None:
        assert got.reason == reason


BA, BB = dim("a", threshold=0.5), dim("b", threshold=0.8)


@pytest.mark.parametrize(("dims", "results", "overall", "passed", "reason"), [
    pytest.param([BA, BB], [0.5, 0.9], 1.0, True, "", id="all-pass-threshold-inclusive"),
    pytest.param([BA, BB], [0.9, 0.7], 0.0, False, 'binary: dimension "b" below pass_threshold',
                 id="one-below"),
    pytest.param([BA, BB], [GONE, 0.9], 0.0, False, 'binary: dimension "a" is unavailable',
                 id="unavailable"),
    pytest.param([BA, BB], [0.9, ERR], 0.0, False,
                 'binary: dimension "b" has evaluator error', id="error"),
    pytest.param([BA, BB], [0.1, GONE], 0.0, False, 'binary: dimension "b" is unavailable',
                 id="unavailable-outranks-an-earlier-failure"),
    pytest.param([BA, dim("g", gate=True, threshold=0.5)], [0.9, 0.1], 0.0, False,
                 'binary: dimension "g" below pass_threshold', id="explicit-gate-same-wording"),
    pytest.param([BA, BB], [GONE, GONE], 0.0, False, 'binary: dimension "a" is unavailable',
                 id="none-available"),
])
def test_binary(dims: list[dict[str, Any]], results: list[float | str], overall: float,
                passed: bool, reason: str) -> None:
    """binary: 1/true iff every dimension is available and at or above its threshold."""
    assert tuple(verdict("binary", dims, results)) == (overall, passed, reason)


@pytest.mark.parametrize(("dims", "results", "threshold", "overall", "passed", "reason"), [
    pytest.param([G, dim("a", 3), dim("b", 1)], [0.9, 1.0, 0.0], None, 0.75, True, None,
                 id="non-gate-weighted-mean-excludes-gate"),
    pytest.param([G, A], [0.59, 1.0], None, 0.0, False,
                 'hybrid: gated dimension "g" below pass_threshold', id="gate-fails-zero"),
    pytest.param([G, A], [0.6, 0.3], None, 0.3, True, None, id="gate-equal-passes"),
    pytest.param([G, A], [GONE, 1.0], None, 0.0, False,
                 'hybrid: gated dimension "g" is unavailable', id="gate-unavailable-zero"),
    pytest.param([G, A], [ERR, 1.0], None, 0.0, False,
                 'hybrid: gated dimension "g" has evaluator error', id="gate-error-zero"),
    pytest.param([G, H], [0.9, 0.5], 0.99, 1.0, True,
                 "hybrid: all dimensions are gates and all passed",
                 id="all-gates-threshold-not-checked"),
    pytest.param([G, A], [0.9, 0.5], 0.6, 0.5, False,
                 "hybrid: non-gate weighted score 0.5000 below scorecard pass_threshold 0.6000",
                 id="threshold-not-met"),
    pytest.param([G, A], [0.9, 0.6], 0.6, 0.6, True, None, id="threshold-inclusive"),
    pytest.param([G, A, dim("b", 5)], [0.9, 0.4, GONE], None, 0.4, True, None,
                 id="non-gate-unavailable-dropped"),
    pytest.param([A, H, G], [1.0, 0.1, GONE], None, 0.0, False,
                 'hybrid: gated dimension "g" is unavailable',
                 id="unavailable-gate-outranks-an-earlier-failing-gate"),
    pytest.param([G, A], [GONE, GONE], None, 0.0, False,
                 'hybrid: gated dimension "g" is unavailable', id="none-available"),
])
def test_hybrid(dims: list[dict[str, Any]], results: list[float | str],
                threshold: float | None, overall: float, passed: bool,
                reason: str | None) -> None:
    """hybrid: a failed or missing gate zeroes the score; else mean of non-gate dims."""
    got = verdict("hybrid", dims, results, threshold)
    assert got.overall == pytest.approx(overall)
    assert got.passed is passed
    if reason is not None:
        assert got.reason == reason
