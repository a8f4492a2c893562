"""Runtime budgets of the spec that a run's supplied events can exceed (tokens, cost).

AgentClash leaves ``runtime_limits`` to the runner. evalfleet is that runner: when the
agent's own events report more tokens or cost than ``max_total_tokens`` / ``max_cost_usd``
allow, the run ends as ``system.run.failed`` with the reason (and reliability sees it).
"""

from __future__ import annotations

from typing import Any

from evalfleet.scoring import EvaluationSpec
from evalfleet.scoring.record import (
    decode_events,
    event_types,
    extract_evidence,
    over_limit,
    run_model_cost_usd,
)

from .recording import Recorder


def exceeded(spec: EvaluationSpec, events: list[dict[str, Any]]) -> str | None:
    """Why the events break the spec's token or cost budget, or None."""
    limits = spec.runtime_limits
    if limits is None or (limits.max_total_tokens is None and limits.max_cost_usd is None):
        return None
    evidence = extract_evidence(decode_events(events))
    tokens = evidence.total_tokens
    if limits.max_total_tokens is not None and over_limit(tokens, limits.max_total_tokens):
        return f"run used {tokens:.15g} tokens, over max_total_tokens {limits.max_total_tokens}"
    cost = run_model_cost_usd(spec, evidence)[0] if limits.max_cost_usd is not None else None
    if limits.max_cost_usd is not None and over_limit(cost, limits.max_cost_usd):
        return f"run cost {cost:.6f} USD, over max_cost_usd {limits.max_cost_usd}"
    return None


def enforce_budgets(recorder: Recorder, spec: EvaluationSpec) -> list[dict[str, Any]]:
    """The recorder's events, ended by ``system.run.failed`` when a budget is exceeded."""
    reason = exceeded(spec, recorder.events)
    if reason is not None:
        recorder.add(event_types.RUN_FAILED, {"reason": reason, "error": reason})
    return recorder.events
