"""A submission whose own files the sandbox cannot hold: the candidate's loss, never a void.

A name over 255 bytes, a path past ``PATH_MAX``, a path that would be both a file and a
directory, more entries or bytes than the profile's seeding limits
(:mod:`sandbox.seed_limits`): the submission chose them, so the run is scored, and lost,
before any sandbox starts. What only the sandbox can find (its workspace full) ends the
sandbox's plan at the seeding (:attr:`~sandbox.plan.PlanResult.files_refused`), with the
same end. Either way the run records ``grader.submission.refused`` and
``system.run.failed`` (:func:`tasks.evaluation.recording.submission_refused`), and scoring books the
loss from the event (docs/scoring.md §18), so a stored run re-scores the same. Were it
``rejected``, ``internal_error`` or ``infra_error``, a losing candidate could choose no
verdict.
"""

from __future__ import annotations

from dataclasses import dataclass

from evalfleet.sandbox.plan import Plan, PlanResult
from evalfleet.sandbox.profile import Profile
from evalfleet.sandbox.seed_limits import unholdable


@dataclass(frozen=True)
class Refusal:
    """The submission's file the sandbox cannot hold (``""``: the sandbox did not say
    which), and the reason the scorecard gives."""

    path: str
    reason: str


def before_run(plan: Plan, profile: Profile) -> Refusal | None:
    """The refusal of ``plan``'s submission files that ``profile``'s sandbox cannot hold,
    found on the host; ``None`` when it can (as far as the host can tell)."""
    found = unholdable(plan.files, profile.workdir, profile.limits)
    if found is None:
        return None
    return Refusal(found.path, f"the sandbox cannot hold the submission: file {found}")


def in_sandbox(result: PlanResult) -> Refusal | None:
    """The refusal the sandbox met while writing the submission's files, or ``None``."""
    if not result.files_refused:
        return None
    return Refusal("", f"the sandbox could not write the submission's files: "
                       f"{result.files_refused}")
