"""Behavioral signals and the behavioral dimension (docs/scoring.md §9).

Each signal reads the tool-call trace (in event order), the multi-turn transcript and the
validator results, and yields a score in [0, 1] or "unavailable" with a reason. The
dimension is the weight-weighted mean of the declared signals; a gated signal below its
``pass_threshold`` zeroes it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

from ..compat.goquote import quote
from ..record.evidence import Evidence, ToolCall
from ..spec.models import BehavioralSignal, EvaluationSpec
from .records import State, ValidatorResult

OUT_OF_SCOPE_MESSAGES = ("tool is not allowed in this runtime",
                         "tool is not available in this runtime")
POLICY_ORIGIN = "policy"
CONFIDENCE_TOOL = "report_confidence"
CONFIDENCE_KEYS = ("confidence", "score")


@dataclass(frozen=True)
class SignalValue:
    """A signal's outcome: a score, or None (unavailable) with the reason."""

    score: float | None
    reason: str = ""

    @property
    def available(self) -> bool:
        """True when the signal produced a score."""
        return self.score is not None


class BehavioralScore(NamedTuple):
    """The behavioral dimension's state, score and reason."""

    state: State
    score: float | None
    reason: str


Signal = Callable[[Evidence, list[ValidatorResult]], SignalValue]


def recovery_behavior(evidence: Evidence, validators: list[ValidatorResult]) -> SignalValue:
    """Transcript runs: did the validators pass after a mismatch; else adaptive retries."""
    if evidence.turns:
        return _transcript_recovery(evidence, validators)
    return _trace_recovery(evidence.tool_calls)


def _transcript_recovery(evidence: Evidence, validators: list[ValidatorResult]) -> SignalValue:
    if not any(turn.mismatch for turn in evidence.turns):
        return SignalValue(1.0)
    outcome = validator_outcome(validators)
    if outcome.score is None or outcome.score >= 1:
        return outcome
    return SignalValue(0.0, "conversation mismatch without final validator recovery")


def _trace_recovery(trace: list[ToolCall]) -> SignalValue:
    failures = attempts = adaptive = 0
    for index, call in enumerate(trace):
        if not call.failed:
            continue
        failures += 1
        if index + 1 < len(trace):
            attempts += 1
            adaptive += trace[index + 1].signature != call.signature
    if failures == 0:
        return SignalValue(1.0)
    if attempts == 0:
        return SignalValue(0.0, "no recovery attempts followed the observed failures")
    return SignalValue(adaptive / attempts)


def exploration_efficiency(evidence: Evidence, validators: list[ValidatorResult]) -> SignalValue:
    """1 − repeated calls / calls, a repeat having an already-seen name and arguments."""
    trace = evidence.tool_calls
    if not trace:
        return SignalValue(1.0)
    distinct = len({call.signature for call in trace})
    return SignalValue(1 - (len(trace) - distinct) / len(trace))


def error_cascade(evidence: Evidence, validators: list[ValidatorResult]) -> SignalValue:
    """1 / the longest run of consecutive failed calls (1 without failures)."""
    longest = streak = 0
    for call in evidence.tool_calls:
        streak = streak + 1 if call.failed else 0
        longest = max(longest, streak)
    return SignalValue(1.0 if longest == 0 else 1 / longest)


def scope_adherence(evidence: Evidence, validators: list[ValidatorResult]) -> SignalValue:
    """1 − out-of-scope calls / calls (policy failures and runtime tool refusals)."""
    trace = evidence.tool_calls
    if not trace:
        return SignalValue(1.0)
    outside = sum(1 for call in trace if is_out_of_scope(call))
    return SignalValue(1 - outside / len(trace))


def is_out_of_scope(call: ToolCall) -> bool:
    """A failed call refused by policy or by the runtime's tool allow-list."""
    if not call.failed:
        return False
    if call.failure_origin.strip().casefold() == POLICY_ORIGIN:
        return True
    message = call.error_message.strip().lower()
    return any(text in message for text in OUT_OF_SCOPE_MESSAGES)


def confidence_calibration(evidence: Evidence, validators: list[ValidatorResult]) -> SignalValue:
    """1 − (confidence − outcome)², floored at 0 (rejected at validation, kept for parity)."""
    confidence = latest_confidence(evidence.tool_calls)
    if confidence is None:
        return SignalValue(None, "report_confidence evidence is unavailable")
    outcome = validator_outcome(validators)
    if outcome.score is None:
        return outcome
    return SignalValue(max(0.0, 1 - (confidence - outcome.score) ** 2))


def latest_confidence(trace: list[ToolCall]) -> float | None:
    """``confidence`` (else ``score``) in [0, 1] of the last successful report_confidence."""
    for call in reversed(trace):
        if call.failed or call.name.strip() != CONFIDENCE_TOOL:
            continue
        arguments = _object(call.arguments)
        for key in CONFIDENCE_KEYS:
            value = _number(arguments.get(key))
            if value is not None and 0 <= value <= 1:
                return value
    return None


def _object(text: str) -> dict[str, Any]:
    try:
        decoded = json.loads(text)
    except (ValueError, RecursionError):  # nested past Python's stack: no object
        return {}
    return decoded if isinstance(decoded, dict) else {}


def _number(value: Any) -> float | None:
    """A JSON number as a float (booleans are not numbers)."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return None


def validator_outcome(validators: list[ValidatorResult]) -> SignalValue:
    """1 if every validator scored 1, 0 at the first below 1; needs available validators.

    Validators are read in order and the first decisive one answers, so a failing
    validator ahead of an unavailable one still gives 0 (as AgentClash does).
    """
    if not validators:
        return SignalValue(None, "validator outcome is unavailable")
    for result in validators:
        if result.state != "available" or result.normalized_score is None:
            return SignalValue(None, "validator outcome requires all validators to be available")
        if result.normalized_score < 1:
            return SignalValue(0.0)
    return SignalValue(1.0)


SIGNALS: dict[str, Signal] = {
    "confidence_calibration": confidence_calibration,
    "error_cascade": error_cascade,
    "exploration_efficiency": exploration_efficiency,
    "recovery_behavior": recovery_behavior,
    "scope_adherence": scope_adherence,
}
"""Every behavioral signal, by its spec key."""


def signal_value(key: str, evidence: Evidence, validators: list[ValidatorResult]) -> SignalValue:
    """The value of the signal named ``key`` (unavailable when the key is unknown)."""
    signal = SIGNALS.get(key)
    if signal is None:
        return SignalValue(None, f"unsupported behavioral signal {quote(key)}")
    return signal(evidence, validators)


def behavioral_dimension(spec: EvaluationSpec, evidence: Evidence,
                         validators: list[ValidatorResult]) -> BehavioralScore:
    """The behavioral dimension: weighted mean of the declared signals, zeroed by gates.

    Args:
        spec: The evaluation spec (its ``behavioral.signals`` are read).
        evidence: The run's evidence.
        validators: The validator results, in declaration order.

    Returns:
        ``BehavioralScore(state, score, reason)``: unavailable when there is no behavioral
        block, any signal is unavailable, or the weights sum to ≤ 0.
    """
    signals = spec.behavioral.signals if spec.behavioral else []
    if not signals:
        return BehavioralScore("unavailable", None, "behavioral config is unavailable")
    scored: list[tuple[BehavioralSignal, float]] = []
    for signal in signals:
        value = signal_value(signal.key, evidence, validators)
        if value.score is None:
            why = value.reason or "signal is unavailable"
            reason = f"behavioral signal {quote(signal.key)} is unavailable: {why}"
            return BehavioralScore("unavailable", None, reason)
        scored.append((signal, value.score))
    total_weight = sum(signal.weight for signal, _ in scored)
    if total_weight <= 0:
        return BehavioralScore("unavailable", None, "behavioral weights are unavailable")
    failures = [f"{s.key}={score:.3f} < {s.pass_threshold:.3f}" for s, score in scored
                if s.gate and s.pass_threshold is not None and score < s.pass_threshold]
    if failures:
        return BehavioralScore("available", 0.0, "behavioral gate failed: " + ", ".join(failures))
    weighted_sum = sum(signal.weight * score for signal, score in scored)
    return BehavioralScore("available", weighted_sum / total_weight, "")

