"""Judge results rebuilt from recorded calls: the shape ``evaluate`` takes (docs/scoring.md §14,
§16).

Each result is ``{mode, normalized_score, confidence, variance, sample_count, model_count,
reason, payload}``; results are ordered by judge key and the warnings (in declaration
order) are what the workflow appends after the sorted scorecard warnings (§13).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Final, NamedTuple

from ..compat.goquote import quote
from ..record.events import Event
from ..record.evidence import Evidence
from ..spec.models import EvaluationSpec, JudgeDecl, JudgeLimits
from . import aggregate
from .call_events import (
    BUDGET_STOP,
    UNJUDGEABLE,
    CallRecord,
    records_from_events,
    unavailable_from_events,
)
from .calls import N_WISE_ALONE, N_WISE_CONTEXT_ERROR, allowed_samples, models_of
from .faults import PROVIDER_FAILED, evidence_timeout
from .parsing import JudgeParseError, Parsed, parse_ranking, parse_score
from .prompts import judge_context

ALL_FAILED: Final = "all judge invocations failed or returned unparsable output"
NOT_RECORDED: Final = "llm judge calls are not recorded in the run's evidence"


class JudgeOutcome(NamedTuple):
    """Every judge's result by key (sorted) and the judge warnings."""

    results: dict[str, dict[str, Any]]
    warnings: list[str]


@dataclass
class _Tally:
    """One judge's calls as they are read back."""

    calls: list[dict[str, Any]] = field(default_factory=list)
    model_scores: dict[str, float] = field(default_factory=dict)
    samples: list[float] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    stopped: list[str] = field(default_factory=list)
    """Calls the judge budget refused."""
    unusable: list[str] = field(default_factory=list)
    """Calls the run's evidence derailed: answered with nothing readable, a request the
    provider refused, a timeout while the judge answered without the evidence
    (:mod:`scoring.judges.faults`)."""
    failed: list[str] = field(default_factory=list)
    """Calls that failed on the provider's or the operator's side (no endpoint, a refused
    connection, a timeout, 401/403/404, 429 or 5xx after retries, a broken envelope)."""


def q(text: str) -> str:
    """Go's ``%q`` of judge keys and model ids (``strconv.Quote``)."""
    return quote(text)


def judge_results(spec: EvaluationSpec, evidence: Evidence,
                  events: Iterable[Event]) -> JudgeOutcome:
    """Every declared judge's result from the recorded judge calls among ``events``."""
    events = list(events)
    recorded, unplanned = records_from_events(events), unavailable_from_events(events)
    results: dict[str, dict[str, Any]] = {}
    warnings: list[str] = []
    for judge in spec.llm_judges:
        result, found = judge_result(judge, evidence, recorded.get(judge.key, []),
                                     spec.scorecard.judge_limits, unplanned.get(judge.key))
        results[judge.key] = result
        warnings += found
    return JudgeOutcome(dict(sorted(results.items())), warnings)


def judge_result(judge: JudgeDecl, evidence: Evidence, records: list[CallRecord],
                 limits: JudgeLimits | None = None,
                 unplanned: str | None = None) -> tuple[dict[str, Any], list[str]]:
    """One judge's result and warnings from its recorded calls."""
    base = _base(judge, limits)
    context = judge_context(judge, evidence)
    if context.the_runs:  # evalfleet's rule: leaving out what is judged is no way out of it
        reason = f"{UNJUDGEABLE}: {context.reason}"
        return _unavailable(base, judge, reason, reason)
    if judge.mode != "n_wise" and context.reason:
        verb = "errored" if context.error else "unavailable"
        return _unavailable(base, judge, context.reason, f"{verb}: {context.reason}")
    if not records:
        reason = unplanned or (N_WISE_ALONE if judge.mode == "n_wise" else NOT_RECORDED)
        verb = "errored" if reason.startswith(N_WISE_CONTEXT_ERROR) else "unavailable"
        return _unavailable(base, judge, reason, f"{verb}: {reason}")
    tally = _tally(judge, records, allowed_samples(judge, limits))
    return _scored(base, judge, tally, limits), tally.warnings


def _base(judge: JudgeDecl, limits: JudgeLimits | None) -> dict[str, Any]:
    samples, models = allowed_samples(judge, limits), len(models_of(judge))
    return {"mode": judge.mode, "normalized_score": None, "confidence": None,
            "variance": None, "sample_count": samples * models, "model_count": models,
            "reason": "", "payload": {"mode": judge.mode}}


def _unavailable(base: dict[str, Any], judge: JudgeDecl, reason: str,
                 warning: str) -> tuple[dict[str, Any], list[str]]:
    """A judge that sent no call: AgentClash counts no sample for it."""
    base.update(reason=reason, sample_count=0, payload={"mode": judge.mode, "reason": reason})
    return base, [f"llm judge {q(judge.key)} {warning}"]


def _tally(judge: JudgeDecl, records: list[CallRecord], samples: int) -> _Tally:
    """Each model's calls in plan order. A model listed twice is sampled twice, and the
    later listing's score replaces the earlier one, as in AgentClash's map of scores."""
    tally = _Tally()
    listed: dict[str, int] = {}
    for model in models_of(judge):
        turn = listed[model] = listed.get(model, -1) + 1
        mine = [r for r in records if r.model == model][turn * samples:(turn + 1) * samples]
        scores = [s for s in (_read(judge, r, tally) for r in mine) if s is not None]
        combined = aggregate.per_model(judge.mode, scores)
        if combined is not None:
            tally.model_scores[model] = combined
    return tally


def _read(judge: JudgeDecl, record: CallRecord, tally: _Tally) -> float | None:
    entry: dict[str, Any] = {"model": record.model, "provider_key": record.provider_key,
                             "sample_index": record.sample_index}
    if record.response_text:
        entry["response_text"] = record.response_text
    parsed, problem = _parse(judge, record)
    if parsed is None:
        entry["error"] = problem
        tally.calls.append(entry)
        tally.warnings.append(f"llm judge {q(judge.key)} model {q(record.model)} "
                              f"sample {record.sample_index}: {problem}")
        _file(record, problem, tally)
        return None
    entry.update(score=parsed.score, **({"confidence": parsed.confidence}
                                        if parsed.confidence else {}))
    tally.calls.append(entry)
    tally.samples.append(parsed.score)
    return parsed.score


def _file(record: CallRecord, problem: str, tally: _Tally) -> None:
    if record.skipped:
        tally.stopped.append(problem)
    elif record.error and record.side == "provider":
        tally.failed.append(problem)
    else:
        tally.unusable.append(problem)


def _parse(judge: JudgeDecl, record: CallRecord) -> tuple[Parsed | None, str]:
    if record.skipped:
        return None, f"{BUDGET_STOP}: {record.error}"
    if record.error and record.control and record.side == "evidence":
        return None, evidence_timeout(record.error, record.control)
    if record.error:
        return None, record.error
    try:
        if judge.mode == "n_wise":
            return parse_ranking(record.response_text, list(record.candidates),
                                 record.current), ""
        return parse_score(judge, record.response_text), ""
    except JudgeParseError as err:
        return None, str(err)


def _unscored(tally: _Tally) -> str:
    """Why no call scored. The budget's stop and the run's evidence (replies that could not
    be read, requests the provider refused, answers the model could not finish in time
    while it answered without the evidence) are evalfleet's reasons, which score the
    dimension 0: a candidate could otherwise steer every judge into them (a prompt injection,
    an answer too large to send or too long to write) and win on the rest of the scorecard.
    Any failure on the provider's side keeps AgentClash's reason, and the dimension is
    unavailable; the scorecard then withholds its result (:func:`faults.starved_judges`)."""
    if tally.stopped and len(tally.stopped) == len(tally.calls):
        return tally.stopped[0]
    if tally.failed or not tally.unusable:  # none read: calls of models it does not list
        return ALL_FAILED
    return f"{UNJUDGEABLE}: {tally.unusable[0]}"


def _scored(base: dict[str, Any], judge: JudgeDecl, tally: _Tally,
            limits: JudgeLimits | None) -> dict[str, Any]:
    payload: dict[str, Any] = {"mode": judge.mode, "calls": tally.calls}
    if tally.stopped:
        payload.update(budget_stopped=True, budget_stopped_calls=len(tally.stopped))
    if allowed_samples(judge, limits) < judge.samples:
        payload["samples_capped"] = {"declared": judge.samples,
                                     "allowed": allowed_samples(judge, limits)}
    if not tally.model_scores:
        reason = _unscored(tally)
        payload.update(reason=reason, unable_to_judge_count=len(tally.calls),
                       warnings=tally.warnings)
        if reason == ALL_FAILED and tally.failed:
            payload[PROVIDER_FAILED] = len(tally.failed)
        return {**base, "reason": reason, "payload": payload}
    scores = list(tally.model_scores.values())
    score = aggregate.across_models(judge, scores)
    label = aggregate.confidence(judge, scores, bool(tally.warnings))
    payload.update(model_scores=tally.model_scores, aggregated_score=score,
                   warnings=tally.warnings)
    return {**base, "normalized_score": score, "confidence": label or None,
            "variance": aggregate.variance(tally.samples), "payload": payload}
