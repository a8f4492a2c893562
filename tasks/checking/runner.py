"""Carry out a check: plan every section's trials, run them, let each section judge.

Runs go through an :data:`Execute` function: :func:`one_by_one` over the in-process
pipeline (``evalfleet check``, exactly as ``evalfleet run`` evaluates) or
:func:`through_fleet` (``--fleet``: queued to live workers like any platform's run).
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING

from evalfleet.sandbox.errors import SandboxError

from ..evaluation.packs import pack_digest
from ..messages import RunRequest, RunResult
from .report import CaseReport, CheckReport
from .sections import SECTIONS, Section
from .subject import Subject, Trial

if TYPE_CHECKING:
    from ..platform.client import EvalfleetClient

Execute = Callable[[Sequence[RunRequest]], list[RunResult]]
Progress = Callable[[RunRequest, RunResult], None]
#: Where a check run's request says what it is (``metadata``, echoed in its result).
METADATA_KEY = "evalfleet_check"


@dataclass(frozen=True)
class Planned:
    """One run of the check: which case, which trial, which index."""

    case: int
    """The subject's position in the list checked."""
    label: str
    index: int
    request: RunRequest


def trials(subject: Subject, sections: Sequence[Section] = SECTIONS) -> list[Trial]:
    """Every section's trials for ``subject``, one per label (the first section asking for
    a label gives its submission; the most repeats asked for win)."""
    merged: dict[str, Trial] = {}
    for section in sections:
        for trial in section.trials(subject):
            known = merged.get(trial.label)
            if known is None or trial.repeats > known.repeats:
                merged[trial.label] = Trial(trial.label, (known or trial).submission,
                                            trial.repeats)
    return list(merged.values())


def plan(subjects: Sequence[Subject], sections: Sequence[Section] = SECTIONS,
         nonce: str | None = None) -> list[Planned]:
    """The requests of the whole check, in order (case by case, trial by trial)."""
    nonce = nonce or uuid.uuid4().hex[:8]
    planned: list[Planned] = []
    for position, subject in enumerate(subjects):
        prefix = f"check-{pack_digest(subject.manifest)[:12]}-{nonce}"
        for trial in trials(subject, sections):
            for index in range(1, trial.repeats + 1):
                request = RunRequest(
                    run_id=f"{prefix}-{len(planned) + 1:04d}", pack=dict(subject.manifest),
                    case_key=subject.case_key, submission=trial.submission, check_run=index,
                    metadata={METADATA_KEY: {"trial": trial.label, "run": index}})
                planned.append(Planned(position, trial.label, index, request))
    return planned


def check_pack(subjects: Sequence[Subject], execute: Execute, *, where: str,
               sections: Sequence[Section] = SECTIONS) -> CheckReport:
    """Run every trial of every case and report each section's verdict."""
    planned = plan(subjects, sections)
    results = execute([p.request for p in planned])
    cases = []
    for position, subject in enumerate(subjects):
        runs: dict[str, list[RunResult]] = {}
        for item, result in zip(planned, results, strict=True):
            if item.case == position:
                runs.setdefault(item.label, []).append(result)
        cases.append(CaseReport(case_key=subject.case_key,
                                sections=[s.judge(subject, runs) for s in sections]))
    spec = subjects[0].pack.spec
    return CheckReport(
        pack=spec.name, version_number=spec.version_number,
        digest=pack_digest(subjects[0].manifest), runs=subjects[0].runs, where=where,
        images=_seen(results, "image"), image_ids=_seen(results, "image_id"),
        runtimes=_seen(results, "runtime"), cases=cases).seal()


def _seen(results: Sequence[RunResult], key: str) -> list[str]:
    return sorted({str(r.resources[key]) for r in results if r.resources.get(key)})


def one_by_one(run: Callable[[RunRequest], RunResult],
               progress: Progress | None = None, *, jobs: int = 1) -> Execute:
    """Run requests one after another, or up to ``jobs`` at once (each in a sandbox of its
    own, as a worker's processes run them); results in request order, ``progress`` as each
    one ends. An engine failure becomes that run's ``infra_error`` (the check reports it; a
    worker would have retried it)."""
    said = threading.Lock()

    def each(request: RunRequest) -> RunResult:
        try:
            result = run(request)
        except SandboxError as error:
            result = failed(request, f"{type(error).__name__}: {error}")
        if progress:
            with said:
                progress(request, result)
        return result

    def execute(requests: Sequence[RunRequest]) -> list[RunResult]:
        if jobs == 1:
            return [each(request) for request in requests]
        with ThreadPoolExecutor(jobs, thread_name_prefix="check-run") as pool:
            return list(pool.map(each, requests))
    return execute


def through_fleet(client: EvalfleetClient, timeout_s: float,
                  progress: Progress | None = None) -> Execute:
    """Queue every request to the fleet at once, then wait for each result in turn; a run
    without a result within ``timeout_s`` of its turn becomes an ``infra_error``."""
    def execute(requests: Sequence[RunRequest]) -> list[RunResult]:
        client.submit_many(requests)
        results = []
        for request in requests:
            try:
                result = client.wait(request.run_id, timeout_s)
            except TimeoutError:
                result = failed(request, f"no result from the fleet within {timeout_s:.0f} s "
                                         "(is a worker serving this pack's profile?)")
            if progress:
                progress(request, result)
            results.append(result)
        return results
    return execute


def failed(request: RunRequest, reason: str) -> RunResult:
    """The result of a check run that produced none."""
    return RunResult(run_id=request.run_id, outcome="infra_error", reason=reason,
                     case_key=request.case_key, metadata=request.metadata)
