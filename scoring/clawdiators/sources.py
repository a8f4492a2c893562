"""The layer's dimension sources: ``script``, ``speed``, ``token_efficiency``,
``call_efficiency`` (registered through :mod:`scoring.layers`), and its metric collector
``run_model_call_count``."""

from __future__ import annotations

import math
from typing import Any

from ..run import collectors
from ..run.collector import Collected, Collector, Context, unavailable, value
from ..run.records import DimensionResult
from ..run.source import Inputs, Source
from ..spec.models import Dimension, EvaluationSpec
from .efficiency import call_efficiency, token_efficiency
from .runinfo import RunInfo, info_in
from .script import script_score
from .speed import FORMULAS


def _result(dimension: Dimension, state: Any, score: float | None, reason: str = ""
            ) -> DimensionResult:
    """The layer's scores are 0–1 whatever the evidence (a score past 1 would carry the
    run past 1000 points); one that is not a number at all is an error."""
    if score is not None and not math.isfinite(score):
        state, score, reason = "error", None, f"{dimension.key} is not a finite number"
    elif score is not None:
        score = min(1.0, max(0.0, score))
    return DimensionResult(key=dimension.key, state=state, score=score, reason=reason,
                           better_direction=dimension.better_direction)


def _info(given: Inputs) -> RunInfo:
    return info_in(given.readings) or RunInfo()


def script(dimension: Dimension, given: Inputs) -> DimensionResult:
    """The evaluator's score under ``score_key`` (default: the dimension key)."""
    block = given.spec.clawdiators
    scale = block.evaluator.score_scale if block and block.evaluator else 1000
    found = script_score(_info(given).evaluator, dimension.score_key or dimension.key, scale)
    if found.score is None:
        return _result(dimension, "error", None, found.reason)
    return _result(dimension, "available", found.score, found.reason)


def speed(dimension: Dimension, given: Inputs) -> DimensionResult:
    """Time used against the limit through the chosen formula (docs/scoring.md §C2)."""
    used = collectors.total_latency_ms(given.evidence)
    limit = speed_limit(given.spec, dimension)
    if used is None or limit is None:
        return _result(dimension, "unavailable", None, "latency evidence is unavailable")
    if used < 0:  # only a trajectory's own times can say so; never faster than instant
        return _result(dimension, "available", 0.0, "scored 0: the run's latency is negative")
    formula = FORMULAS[dimension.speed.formula if dimension.speed else "linear"]
    return _result(dimension, "available", formula(float(used), float(limit)))


def tokens(dimension: Dimension, given: Inputs) -> DimensionResult:
    """max(0, 1 − tokens/budget); 0 without a verified trajectory (§C3)."""
    info, budget = _info(given), token_budget(given.spec, dimension)
    if not info.verified or not budget:
        return _result(dimension, "available", 0.0, f"scored 0: {info.unverified_reason}")
    ev = given.evidence
    used = (ev.input_tokens or 0) + (ev.output_tokens or 0) or (ev.total_tokens or 0)
    if used < 0 or min(ev.input_tokens or 0, ev.output_tokens or 0) < 0:
        return _result(dimension, "available", 0.0,
                       "scored 0: the trajectory reports a negative token count")
    return _result(dimension, "available", token_efficiency(used, budget))


def calls(dimension: Dimension, given: Inputs) -> DimensionResult:
    """LLM calls between ``optimal`` and ``max``; 0 without a verified trajectory (§C3)."""
    info, (optimal, most) = _info(given), call_limits(given.spec, dimension)
    if not info.verified or most is None:
        return _result(dimension, "available", 0.0, f"scored 0: {info.unverified_reason}")
    return _result(dimension, "available", call_efficiency(info.model_calls, optimal, most))


def speed_limit(spec: EvaluationSpec, dimension: Dimension) -> int | None:
    """``speed.limit_ms``, else the constraint, else ``runtime_limits.max_duration_ms``."""
    constraints = spec.clawdiators.constraints if spec.clawdiators else None
    runtime = spec.runtime_limits
    for limit in (dimension.speed.limit_ms if dimension.speed else None,
                  constraints.max_duration_ms if constraints else None,
                  runtime.max_duration_ms if runtime else None):
        if limit is not None:
            return limit
    return None


def token_budget(spec: EvaluationSpec, dimension: Dimension) -> int | None:
    """``efficiency.budget``, else ``constraints.token_budget``."""
    if dimension.efficiency and dimension.efficiency.budget is not None:
        return dimension.efficiency.budget
    constraints = spec.clawdiators.constraints if spec.clawdiators else None
    return constraints.token_budget if constraints else None


def call_limits(spec: EvaluationSpec, dimension: Dimension) -> tuple[int, int | None]:
    """(``optimal``, ``max``); ``max`` defaults to ``constraints.max_llm_calls``."""
    optimal = dimension.efficiency.optimal if dimension.efficiency else 0
    if dimension.efficiency and dimension.efficiency.max is not None:
        return optimal, dimension.efficiency.max
    constraints = spec.clawdiators.constraints if spec.clawdiators else None
    return optimal, constraints.max_llm_calls if constraints else None


def model_calls(ctx: Context) -> Collected:
    """The count of ``model.call.completed`` events (Clawdiators' LLM-call count)."""
    info = info_in(ctx.readings)
    if info is None:
        return unavailable("model call count is unavailable")
    return value(info.model_calls)


SOURCES: dict[str, Source] = {"script": script, "speed": speed, "token_efficiency": tokens,
                              "call_efficiency": calls}
COLLECTORS: dict[str, Collector] = {"run_model_call_count": model_calls}
