"""Which judge calls a run needs: samples × models per judge, each with its message
(docs/scoring.md §14).

Planning is pure: the worker sends the planned calls and records each as an event
(:mod:`scoring.judges.call_events`); scoring rebuilds the judge results from those events.
``scorecard.judge_limits.max_samples_per_judge`` (when > 0) caps each judge's samples.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Final

from ..record.evidence import Evidence
from ..spec.models import EvaluationSpec, JudgeDecl, JudgeLimits
from .prompts import (
    Candidate,
    Context,
    judge_context,
    judge_message,
    n_wise_message,
    without_evidence,
)
from .providers import infer_provider

DEFAULT_TIMEOUT_MS: Final = 60_000
N_WISE_ALONE: Final = "n_wise judges require at least two run agents in the run"
N_WISE_CONTEXT_ERROR: Final = "resolve n_wise context for "
"""How ``buildNWiseCandidates`` words a run's malformed context (then the run id)."""
FNV_OFFSET: Final = 0xCBF29CE484222325
FNV_PRIME: Final = 0x100000001B3


@dataclass(frozen=True)
class JudgeCall:
    """One call to send: a judge's sample on one model."""

    judge_key: str
    mode: str
    model: str
    provider_key: str
    sample_index: int
    """1-based, as AgentClash numbers samples."""
    message: str
    timeout_ms: int
    candidates: tuple[str, ...] = ()
    """n_wise: the candidate run ids in the order the message shows them."""
    current: str = ""
    """n_wise: the run being scored."""
    control: str = ""
    """The same prompt with every piece of evidence replaced by a placeholder: the worker
    sends it after a timeout, to tell whose fault the timeout is (:mod:`.faults`)."""


@dataclass(frozen=True)
class JudgePlan:
    """A judge's calls, or why it cannot run (``error`` when a reference is malformed)."""

    judge: JudgeDecl
    calls: tuple[JudgeCall, ...] = ()
    reason: str = ""
    error: bool = False


def models_of(judge: JudgeDecl) -> list[str]:
    """The judge's models: ``model``, else the non-blank ``models``."""
    return [judge.model] if judge.model else [m for m in judge.models if m]


def allowed_samples(judge: JudgeDecl, limits: JudgeLimits | None) -> int:
    """The judge's samples per model, capped by ``max_samples_per_judge`` when that is > 0."""
    cap = limits.max_samples_per_judge if limits else None
    return min(judge.samples, cap) if cap else judge.samples


def timeout_ms(judge: JudgeDecl) -> int:
    return judge.timeout_ms if judge.timeout_ms and judge.timeout_ms > 0 else DEFAULT_TIMEOUT_MS


@dataclass(frozen=True)
class Peer:
    """Another run of the same case that n_wise judges compare this run with."""

    run_id: str
    evidence: Evidence


def plan_run(spec: EvaluationSpec, evidence: Evidence, run_id: str,
             peers: Sequence[Peer] = (), *, max_message_bytes: int | None = None
             ) -> list[JudgePlan]:
    """Every judge's plan, in declaration order (``peers``: other runs for n_wise)."""
    limits = spec.scorecard.judge_limits
    return [plan_judge(j, evidence, run_id, limits, peers, max_message_bytes=max_message_bytes)
            for j in spec.llm_judges]


def plan_judge(judge: JudgeDecl, evidence: Evidence, run_id: str,
               limits: JudgeLimits | None = None, peers: Sequence[Peer] = (), *,
               max_message_bytes: int | None = None) -> JudgePlan:
    """One judge's calls: samples (capped) × models, model-major as AgentClash sends them.

    ``max_message_bytes``: an n_wise message shows each candidate's evidence within an
    equal share of it (:meth:`Candidate.within`), the prompt keeping one share."""
    context = judge_context(judge, evidence)
    if context.reason:
        reason = n_wise_reason(run_id, context) if judge.mode == "n_wise" else context.reason
        return JudgePlan(judge, reason=reason, error=context.error)
    if judge.mode == "n_wise":
        others = peer_candidates(judge, peers)
        if isinstance(others, JudgePlan):
            return others
        current = Candidate(run_id, "lane-0", 0, context.entries)
        if max_message_bytes:
            share = max_message_bytes // (len(others) + 2)
            current, others = current.within(share), [c.within(share) for c in others]
        return _n_wise(judge, current, others, limits)
    message = judge_message(judge, context.entries)
    control = judge_message(judge, without_evidence(context.entries))
    calls = tuple(JudgeCall(judge.key, judge.mode, model, infer_provider(model), sample,
                            message, timeout_ms(judge), control=control)
                  for model in models_of(judge)
                  for sample in range(1, allowed_samples(judge, limits) + 1))
    return JudgePlan(judge, calls)


def peer_candidates(judge: JudgeDecl, peers: Sequence[Peer]) -> list[Candidate] | JudgePlan:
    """The peers that carry the judged evidence, as n_wise candidates (each keeps its lane);
    when none does, the unavailable plan naming the first. evalfleet's rule: AgentClash
    makes the judge unavailable when any run agent lacks it, but a peer here is another
    submitter's run, which must not take this run's judge away (found by a red-team pass:
    a run that sent no final output, passed as a peer, dropped the judge of another)."""
    found: list[Candidate] = []
    lacking: JudgePlan | None = None
    for lane, peer in enumerate(peers, start=1):
        context = judge_context(judge, peer.evidence)
        if context.reason:
            lacking = lacking or JudgePlan(judge, reason=n_wise_reason(peer.run_id, context),
                                           error=context.error)
            continue
        found.append(Candidate(peer.run_id, f"lane-{lane}", lane, context.entries))
    return lacking if lacking is not None and not found else found


def n_wise_reason(run_id: str, context: Context) -> str:
    """Why an n_wise judge has no candidates, as ``buildNWiseCandidates`` words it."""
    if context.error:
        return f"{N_WISE_CONTEXT_ERROR}{run_id}: {context.reason}"
    return f"judge context unavailable for run agent {run_id}: {context.reason}"


def _n_wise(judge: JudgeDecl, current: Candidate, peers: Sequence[Candidate],
            limits: JudgeLimits | None) -> JudgePlan:
    everyone = sorted([current, *peers], key=lambda c: (c.lane_index, c.run_agent_id))
    if len(everyone) < 2:
        return JudgePlan(judge, reason=N_WISE_ALONE)
    calls = []
    for model in models_of(judge):
        for sample in range(1, allowed_samples(judge, limits) + 1):
            ordered = order_candidates(everyone, current.run_agent_id, judge.key, sample - 1,
                                       judge.position_debiasing)
            calls.append(JudgeCall(
                judge.key, judge.mode, model, infer_provider(model), sample,
                n_wise_message(judge, ordered), timeout_ms(judge),
                tuple(c.run_agent_id for c in ordered), current.run_agent_id,
                n_wise_message(judge, [replace(c, entries=without_evidence(c.entries))
                                       for c in ordered])))
    return JudgePlan(judge, tuple(calls))


def order_candidates(candidates: list[Candidate], run_id: str, judge_key: str,
                     sample: int, debias: bool) -> list[Candidate]:
    """Rotate by the 0-based sample index (position debiasing), else a seeded shuffle."""
    ordered = list(candidates)
    if len(ordered) <= 1:
        return ordered
    if debias:
        shift = sample % len(ordered)
        return ordered[shift:] + ordered[:shift]
    random.Random(shuffle_seed(run_id, judge_key, sample)).shuffle(ordered)
    return ordered


def judge_models(spec: EvaluationSpec) -> dict[str, list[str]]:
    """Each judge's models, by judge key (a result's provenance)."""
    return {judge.key: models_of(judge) for judge in spec.llm_judges}


def judge_seeds(spec: EvaluationSpec, run_id: str) -> dict[str, list[int]]:
    """The seeds of the candidate order of each n_wise judge that shuffles (no position
    debiasing), per sample, by judge key: the only randomness in scoring a run."""
    limits = spec.scorecard.judge_limits
    return {judge.key: [shuffle_seed(run_id, judge.key, sample)
                        for sample in range(allowed_samples(judge, limits))]
            for judge in spec.llm_judges
            if judge.mode == "n_wise" and not judge.position_debiasing}


def shuffle_seed(run_id: str, judge_key: str, sample: int) -> int:
    """FNV-1a (64-bit) over the run id, the judge key and the sample index (4 bytes, LE)."""
    digest = FNV_OFFSET
    for byte in [*run_id.encode(), *judge_key.encode(), *sample.to_bytes(4, "little")]:
        digest = ((digest ^ byte) * FNV_PRIME) & 0xFFFFFFFFFFFFFFFF
    return digest
