"""Constraint violations (docs/scoring.md §C6): runtime limits a run went over.

They are reported (``constraint_violations``) and never change the score, as in
Clawdiators. Unlike Clawdiators, they are checked whenever the run carries the number —
time comes from the submitted trajectory when there is one, else from the worker's own
story of the commands it ran, so it is always known; tokens, tool calls, LLM calls and
cost come from the agent's trajectory. The worker runs the same check on the submitted
trajectory before any container starts (``constraints.enforce`` can end the run there).
"""

from __future__ import annotations

from typing import NamedTuple

from ..record import pricing
from ..record.evidence import Evidence, over_limit
from ..run import collectors
from ..spec.models import EvaluationSpec
from ..spec.superset import Constraints
from .runinfo import RunInfo


class Violation(NamedTuple):
    constraint: str
    limit: float
    used: float
    message: str


def violations(spec: EvaluationSpec, evidence: Evidence, info: RunInfo) -> list[Violation]:
    """Every declared constraint the run went over, in a fixed order."""
    block = spec.clawdiators.constraints if spec.clawdiators else None
    if block is None:
        return []
    used = _usage(spec, evidence, info, block)
    found = []
    for name, value in used.items():
        limit = getattr(block, name)
        if limit is not None and value is not None and over_limit(value, limit):
            found.append(Violation(name, limit, value, f"{name} exceeded: {_n(value)} > "
                                                       f"{_n(limit)}"))
    return found


def _usage(spec: EvaluationSpec, evidence: Evidence, info: RunInfo,
           block: Constraints) -> dict[str, float | None]:
    cost = pricing.run_model_cost_usd(spec, evidence)[0] if block.max_cost_usd else None
    return {
        "max_duration_ms": collectors.total_latency_ms(evidence),
        "max_total_tokens": evidence.total_tokens,
        "max_tool_calls": evidence.tool_call_count,
        "max_llm_calls": info.model_calls if info.trajectory_steps else None,
        "max_cost_usd": cost,
    }


def _n(value: float) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)
