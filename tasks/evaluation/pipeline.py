"""The run pipeline as a plain function: request in, :class:`RunResult` out. No Celery.

validate (spec errors stop here, before any container) → acquire a sandbox (none when the
plan has nothing to execute, or the submission's files cannot be held:
:mod:`tasks.evaluation.refusals`) → run the plan (seed → commands → stop the candidate →
tests → captures) → close → score. A candidate's failure is a scored result; a bad
request is a ``rejected`` result; our infrastructure's failure is an exception
(:class:`~sandbox.errors.SandboxUnavailable`) for the caller to retry. ``run_pipeline`` is
what the Celery task and ``evalfleet run`` both call.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from evalfleet.sandbox.base import Sandbox, SandboxFactory
from evalfleet.sandbox.evaluation import plans
from evalfleet.sandbox.plan import Plan, PlanResult
from evalfleet.sandbox.profile import Limits, Profile
from evalfleet.sandbox.results import text
from evalfleet.scoring import (
    Case,
    CaseError,
    EvaluationSpec,
    Pack,
    evaluate,
    find_case,
    prerun_check,
    trajectory_verified,
)
from evalfleet.scoring.record import event_types

from ..decoding import decode_loosely, fallback_run_id, parse_request
from ..messages import (
    FieldProblem,
    Preflight,
    Rejection,
    RunRequest,
    RunResult,
    cap_size,
)
from . import clawdiators, recording, refusals
from .budgets import enforce_budgets
from .closing import close_now
from .judging import JudgingConfig, judged_events
from .pack_faults import no_contest, pack_fault
from .packs import SandboxBlock, resolve_pack, sandbox_block
from .plan_builder import build_plan, step_env
from .provenance import provenance
from .rating import rating
from .refusals import Refusal

MiB = 1024 * 1024
Clock = Callable[[], datetime]


@dataclass(frozen=True)
class ProfileBounds:
    """An operator-registered profile: the ceiling every run on it is clamped to."""

    profile: Profile
    allow_network: bool = False
    network_mode: str = "bridge"
    """The Docker network a pack with ``network_access: true`` gets on this profile."""


@dataclass(frozen=True)
class PipelineConfig:
    """What the pipeline needs from the operator (built from ``workers.settings``)."""

    profiles: dict[str, ProfileBounds] = field(default_factory=dict)
    packs_dir: Path | None = None
    max_request_bytes: int = 8 * MiB
    max_result_bytes: int = 32 * MiB
    worker_id: str = ""
    judging: JudgingConfig = field(default_factory=JudgingConfig)
    """LLM-judge endpoints and call policy (judges run after the sandbox is closed)."""


@dataclass
class Timer:
    """Per-phase wall times in milliseconds."""

    phases: dict[str, float] = field(default_factory=dict)
    started: float = field(default_factory=time.perf_counter)

    def mark(self, phase: str, since: float) -> float:
        now = time.perf_counter()
        self.phases[phase] = round((now - since) * 1000, 3)
        return now


def utc_now() -> datetime:
    return datetime.now(UTC)


def run_pipeline(body: str | bytes | dict[str, Any], factory: SandboxFactory,
                 config: PipelineConfig, clock: Clock = utc_now, *,
                 close: Callable[[Sandbox], None] = close_now,
                 gate: Gate | None = None) -> RunResult:
    """Run one request end to end and return its result (not yet published).

    ``close`` receives the sandbox once its plan is done (or failed); the worker passes
    :meth:`tasks.evaluation.closing.Closer.close_later` so removal leaves the run's critical path.
    ``gate`` (:class:`tasks.checking.preflight.PreflightGate`) may refuse the run before any
    container starts; its answer is the result's ``preflight``.

    Raises:
        SandboxUnavailable: the engine or the container failed; retry the run.
    """
    timer = Timer()
    try:
        run = prepare(parse_request(body, config.max_request_bytes), config)
    except Rejection as rejection:
        return rejected(body, rejection, config)
    preflight, refuse = gate(run) if gate else (None, False)
    if refuse and preflight is not None:
        return refused(run, preflight, config)
    if run.skip_sandbox or run.plan.executes_nothing:
        plan_result, started = _no_sandbox(run), clock()
    else:
        plan_result, started = _sandbox(run, factory, timer, clock, close)
    result = _score(run, plan_result, started, timer, clock, config.judging)
    result.worker, result.preflight = config.worker_id, preflight
    return cap_size(result, config.max_result_bytes)


@dataclass(frozen=True)
class Prepared:
    """A run with everything decided that can be decided before a container starts."""

    request: RunRequest
    pack: Pack
    case: Case | None
    block: SandboxBlock
    profile: Profile
    plan: Plan
    stop_reason: str | None = None
    """Why the submitted events end the run before any container (scoring's pre-run check:
    a Clawdiators constraint the pack enforces), or None."""
    refusal: Refusal | None = None
    """The submission's file the sandbox cannot hold (:mod:`tasks.evaluation.refusals`): the
    candidate's loss before any container, or None."""

    @property
    def skip_sandbox(self) -> bool:
        """The pre-run check or the submission's files ended the run: no sandbox starts."""
        return self.stop_reason is not None or self.refusal is not None


#: Decides, before any container starts, a run's preflight standing and whether to refuse it.
Gate = Callable[[Prepared], tuple[Preflight, bool]]


def prepare(request: RunRequest, config: PipelineConfig) -> Prepared:
    """Resolve the pack, case, profile and sandbox plan of a request.

    Raises:
        Rejection: the pack, case, sandbox block, limits or files do not fit.
    """
    pack = resolve_pack(request, config.packs_dir)
    case = pick_case(pack, request.case_key)
    block = sandbox_block(pack)
    profile = choose_profile(request, pack.spec, block, config)
    plan = build_plan(pack.spec, case, block, request, profile.limits.output_cap_bytes,
                      profile.workdir)
    stop_reason = prerun_check(pack.spec, request.submission.events or [])
    return Prepared(request, pack, case, block, profile, plan, stop_reason,
                    refusals.before_run(plan, profile))


def pick_case(pack: Pack, case_key: str | None) -> Case | None:
    """The case to score (required when the pack has several).

    Raises:
        Rejection: no such case, or several cases and no ``case_key``.
    """
    if case_key is None:
        if len(pack.cases) > 1:
            keys = ", ".join(c.qualified_key for c in pack.cases)
            raise Rejection([FieldProblem(field="request.case_key",
                                          message=f"is required: the pack has cases {keys}")])
        return pack.cases[0] if pack.cases else None
    try:
        return find_case(pack.cases, case_key)
    except CaseError as err:
        raise Rejection([FieldProblem(field="request.case_key", message=str(err))]) from None


def choose_profile(request: RunRequest, spec: EvaluationSpec, block: SandboxBlock,
                   config: PipelineConfig) -> Profile:
    """The operator's profile, clamped by the pack's and the request's limits (never raised).

    Raises:
        Rejection: unknown profile, or network access on a profile that forbids it.
    """
    name = block.profile_name(set(config.profiles))
    bounds = config.profiles.get(name)
    if bounds is None:
        known = ", ".join(sorted(config.profiles)) or "none"
        raise Rejection([FieldProblem(field="pack.version.sandbox.profile",
                                      message=f'names no registered profile "{name}" '
                                              f"(registered: {known})")])
    if block.network_access and not bounds.allow_network:
        raise Rejection([FieldProblem(
            field="pack.version.sandbox.network_access",
            message=f'needs a profile that allows egress; profile "{name}" does not')])
    limits = clamp(bounds.profile.limits, block, request, spec)
    env = {**bounds.profile.env, **step_env(block, request)}
    hardening = bounds.profile.hardening
    if block.network_access:  # only reachable on a profile the operator allowed egress
        hardening = replace(hardening, network_mode=bounds.network_mode)
    return replace(bounds.profile, limits=limits, env=env, hardening=hardening)


def clamp(ceiling: Limits, block: SandboxBlock, request: RunRequest,
          spec: EvaluationSpec) -> Limits:
    """The smallest of the operator's, the pack's and the request's limits."""
    overrides = request.sandbox
    walls = [ceiling.wall_timeout_s, _s(block.limits.wall_timeout_ms), _s(request.time_limit_ms),
             _s(spec.runtime_limits.max_duration_ms if spec.runtime_limits else None)]
    memory = [ceiling.memory_bytes, _mib(block.limits.memory_mb),
              _mib(overrides.memory_mb if overrides else None)]
    cpus = [ceiling.cpus, block.limits.cpus, overrides.cpus if overrides else None]
    pids = [ceiling.pids, block.limits.pids, overrides.pids if overrides else None]
    output = [ceiling.output_cap_bytes, overrides.output_cap_bytes if overrides else None]
    return replace(ceiling, wall_timeout_s=_least(walls), memory_bytes=int(_least(memory)),
                   cpus=_least(cpus), pids=int(_least(pids)), output_cap_bytes=int(_least(output)))


def _least(values: list[Any]) -> Any:
    return min(v for v in values if v is not None)


def _s(ms: int | None) -> float | None:
    return ms / 1000 if ms is not None else None


def _mib(mb: int | None) -> int | None:
    return mb * MiB if mb is not None else None


def _sandbox(run: Prepared, factory: SandboxFactory, timer: Timer, clock: Clock,
             close: Callable[[Sandbox], None] = close_now) -> tuple[PlanResult, datetime]:
    mark = timer.started
    sandbox = factory.acquire(run.profile, run_id=run.request.run_id)
    mark = timer.mark("sandbox_acquire", mark)
    started = clock()
    try:
        result = plans.run_plan(sandbox, run.plan)
    finally:
        close(sandbox)
    timer.mark("sandbox", mark)
    _split_plan_time(timer, result)
    return result, started


def _no_sandbox(run: Prepared) -> PlanResult:
    """The plan result of a run that starts no sandbox: its pre-run check ended it, or its
    plan has nothing to execute (``resources.sandbox_id`` is then ``""``)."""
    profile = run.profile
    return PlanResult(sandbox_id="", profile=profile.name, image=profile.image,
                      limits=profile.limits, commands=(), tests=(), checks=())


def _split_plan_time(timer: Timer, result: PlanResult) -> None:
    commands = sum(c.duration_s for c in result.commands) * 1000
    tests = sum(t.result.duration_s for t in result.tests) * 1000
    timer.phases["commands"] = round(commands, 3)
    timer.phases["code_execution"] = round(tests, 3)
    timer.phases["seed_and_capture"] = round(max(0.0, result.duration_s * 1000 - commands
                                                 - tests), 3)


def _score(run: Prepared, plan_result: PlanResult, started: datetime, timer: Timer,
           clock: Clock, judging: JudgingConfig | None = None) -> RunResult:
    mark = time.perf_counter()
    request, pack, case = run.request, run.pack, run.case
    refusal = run.refusal or refusals.in_sandbox(plan_result)
    events = _ended(_events(run, plan_result, started, clock), run, refusal, clock)
    if pack.spec.llm_judges:  # the sandbox is closed: judge calls run in the worker
        events = judged_events(pack.spec, events, [case] if case else [], request.run_id,
                               judging or JudgingConfig(), clock, peers=request.peers)
        mark = timer.mark("judging", mark)
    card = evaluate(pack.spec, events, [case] if case else [])
    fault = pack_fault(plan_result, run.profile.workdir)
    if fault is not None:  # the pack spoiled the run: no contest, whatever the evidence says
        card = no_contest(card, fault)
    rated = rating(request, card, trajectory_verified(events))
    timer.mark("scoring", mark)
    timer.phases["total"] = round((time.perf_counter() - timer.started) * 1000, 3)
    resources = _resources(plan_result)
    return RunResult(
        run_id=request.run_id, outcome="scored",
        reason=fault or (refusal.reason if refusal else "") or card.withheld_reason or "",
        scorecard=card,
        pack=pack.spec.name,
        case_key=case.case_key if case else None, input_set=case.input_set if case else None,
        metadata=request.metadata,
        timings_ms=dict(timer.phases), resources=resources, events=events,
        provenance=provenance(pack, request.pack_ref, resources, request.run_id),
        rating=rated)


def _events(run: Prepared, result: PlanResult, started: datetime,
            clock: Clock) -> list[dict[str, Any]]:
    request, spec, block = run.request, run.pack.spec, run.block
    supplied = request.submission.events
    recorder = recording.Recorder(supplied or [], clock())
    clawdiators.record_manifest(recorder, spec, request, run.profile.workdir)
    if supplied is None:
        recording.run_story(recorder, started, result, _final_output(request, block, result))
    recording.command_events(recorder, result)
    recording.grader_events(recorder, result)
    return enforce_budgets(recorder, spec)


def _ended(events: list[dict[str, Any]], run: Prepared, refusal: Refusal | None,
           clock: Clock) -> list[dict[str, Any]]:
    """``events``, ended by the submission's files the sandbox could not hold, else by the
    pre-run check's reason, when either ended the run."""
    if refusal is None and run.stop_reason is None:
        return events
    recorder = recording.Recorder(events, clock())
    if refusal is not None:
        recording.submission_refused(recorder, refusal.path, refusal.reason)
    else:
        reason = run.stop_reason or ""
        recorder.add(event_types.RUN_FAILED, {"reason": reason, "error": reason})
    return recorder.events


def _final_output(request: RunRequest, block: SandboxBlock, result: PlanResult) -> str | None:
    if request.submission.final_output is not None:
        return request.submission.final_output
    if block.final_output == "none" or not result.commands:
        return None
    return text(result.commands[-1].stdout)


def _resources(result: PlanResult) -> dict[str, Any]:
    limits = result.limits
    return {
        "sandbox_id": result.sandbox_id, "profile": result.profile, "image": result.image,
        "image_id": result.image_id, "runtime": result.runtime,
        "supervisor": result.supervisor or None,
        "usage": dict(result.usage) or None, "usage_unavailable": result.usage_unavailable,
        "limits": {"memory_bytes": limits.memory_bytes, "cpus": limits.cpus,
                   "pids": limits.pids, "wall_timeout_s": limits.wall_timeout_s,
                   "output_cap_bytes": limits.output_cap_bytes},
        "oom_killed": any(c.oom_killed for c in result.commands),
        "timed_out": any(c.timed_out for c in result.commands),
        "output_truncated": any(c.stdout_truncated or c.stderr_truncated
                                for c in result.commands),
        "deadline_exceeded": result.deadline_exceeded,
        "commands_skipped": result.commands_skipped,
        "capture_bytes": sum(len(c.content or b"") for c in result.captures),
        "captures_truncated": sum(c.truncated for c in result.captures),
    }


def refused(run: Prepared, preflight: Preflight, config: PipelineConfig) -> RunResult:
    """The answer to a run whose pack version has no passing preflight (never retried)."""
    return RunResult(run_id=run.request.run_id, outcome="rejected",
                     reason="no passing preflight", pack=run.pack.spec.name,
                     case_key=run.case.case_key if run.case else None,
                     errors=[FieldProblem(field="pack", message=preflight.reason)],
                     metadata=run.request.metadata, worker=config.worker_id,
                     preflight=preflight)


def rejected(body: Any, rejection: Rejection, config: PipelineConfig) -> RunResult:
    """The published answer to a request that can never succeed."""
    decoded = decode_loosely(body)
    metadata = decoded.get("metadata") if isinstance(decoded, dict) else None
    run_id = fallback_run_id(decoded if isinstance(decoded, dict) else body)
    return RunResult(run_id=run_id, outcome="rejected", reason=rejection.reason,
                     errors=rejection.problems, worker=config.worker_id,
                     metadata=metadata if isinstance(metadata, dict) else {},
                     provenance=provenance())
