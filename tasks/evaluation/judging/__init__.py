"""LLM judges, the worker half: send the planned judge calls over HTTP and record them.

Runs in the worker after the sandbox is closed (never inside it). Each call reserves its
worst case against ``scorecard.judge_limits`` before it is sent; each call, sent or
refused, becomes a ``grader.judge.*`` event, from which scoring rebuilds the results.
"""

from __future__ import annotations

from .config import JudgingConfig, ProviderEndpoint
from .http import CallFailed, Reply, Sender
from .runner import judge_events, judged_events

__all__ = ["CallFailed", "JudgingConfig", "ProviderEndpoint", "Reply", "Sender",
           "judge_events", "judged_events"]
