"""LLM judges, the pure half: validation, planning, parsing, aggregation, budgets.

The worker (:mod:`tasks.evaluation.judging`) sends the planned calls over HTTP and records each as
an event; :func:`judge_results` rebuilds the results from those events, so a stored run
re-scores offline without calling any model.
"""

from __future__ import annotations

from .budget import Budget, Charge, Reservation
from .call_events import (
    CALL_COMPLETED,
    CALL_SKIPPED,
    PLAN_UNAVAILABLE,
    call_payload,
    request_summary,
)
from .calls import JudgeCall, JudgePlan, Peer, judge_models, judge_seeds, plan_judge, plan_run
from .prompts import Candidate
from .rebuild import JudgeOutcome, judge_results
from .rules import judge_rules

__all__ = [
    "CALL_COMPLETED",
    "CALL_SKIPPED",
    "PLAN_UNAVAILABLE",
    "Budget",
    "Candidate",
    "Charge",
    "JudgeCall",
    "JudgeOutcome",
    "JudgePlan",
    "Peer",
    "Reservation",
    "call_payload",
    "judge_models",
    "judge_results",
    "judge_rules",
    "judge_seeds",
    "plan_judge",
    "plan_run",
    "request_summary",
]
