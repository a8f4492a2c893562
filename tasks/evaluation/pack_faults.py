"""A pack's own mistake, read from the sandbox's record: no contest, never the candidate's loss.

Whose fault it is decides the path: a step that fails because of what the **pack** did ends
``scored`` with ``validity: invalid`` and a ``pack_error`` reason — not retried, not booked
to the candidate, not ``infra_error``. What counts as the pack's is only what the candidate
cannot have caused (a candidate must never be able to turn a loss into no contest):

* its environment cannot work: the probe of :mod:`tasks.evaluation.pack_environment` found the
  workspace unwritable, too small for the pack's files, or a tool the pack's own commands
  name missing (reason ``pack environment: …``);
* the pack's files could not be written, or a setup command did not succeed: both come
  before anything of the candidate's exists;
* the custom-script evaluator timed out or could not run (one that ran to its end read the
  candidate's files, so its crash is the candidate's: the dimension scores 0,
  ``scoring.clawdiators``; the FIFO a candidate could hang it on is removed first);
* a capture or listing of a path outside what the candidate may write (the workspace and
  ``/tmp``) that is in a kernel pseudo-filesystem (``/proc/self/mem``, ``/dev/stdout``),
  is not a regular file (a FIFO), or — a listing — is not whole (its entry cap hit at
  ``/``, entries left out, a failure). Inside the workspace or ``/tmp`` the same oddities
  may be the candidate's doing (a FIFO planted at the captured path), so they stay the
  candidate's there.

A hidden test that times out or prints past the output cap stays the candidate's (its
validator fails, as in AgentClash): the candidate's code runs under it and can hang it or
flood it on purpose — even through pytest's capture, by writing to the descriptor pytest
keeps — so booking either to the pack would let a losing candidate turn its loss into no
contest. The output is capped all the same (the result stays small), and a pack whose own
tests flood or hang is caught before it goes live: its reference cannot win
``evalfleet check``.
"""

from __future__ import annotations

import posixpath

from evalfleet.sandbox.evaluator import EvaluatorRecord
from evalfleet.sandbox.paths import is_under
from evalfleet.sandbox.plan import PlanResult
from evalfleet.sandbox.results import DirectoryListing, ExecResult, FileCapture
from evalfleet.scoring import Scorecard

PACK_ERROR = "pack_error: "
ENVIRONMENT = "pack environment: "
#: Where the candidate may write besides the workspace: what is odd there may be its doing.
CANDIDATE_WRITABLE = ("/tmp",)
#: The kernel's pseudo-filesystems: nothing there is a pack's evidence (``/proc/self/mem``
#: reads as an empty file under gVisor, fails under runc).
PSEUDO = ("/proc", "/sys", "/dev")


def pack_fault(result: PlanResult, workspace: str) -> str | None:
    """Why the run is the pack's fault (the reason, prefixed), or None when it is not."""
    environment = result.environment
    if environment is not None and environment.problems:
        return ENVIRONMENT + "; ".join(environment.problems)
    found = [*_setup(result), *_evaluator(result.evaluator), *_checks(result, workspace)]
    return PACK_ERROR + "; ".join(found) if found else None


def no_contest(card: Scorecard, reason: str) -> Scorecard:
    """The scorecard of a run the pack spoiled: invalid, no score, no result, the reason."""
    return card.model_copy(update={"validity": "invalid", "validity_reason": reason,
                                   "score": None, "result": None, "passed": None,
                                   "warnings": sorted({*card.warnings, reason})})


def _setup(result: PlanResult) -> list[str]:
    if result.setup_refused:
        return [f"the pack's files could not be written: {result.setup_refused}"]
    failed = result.setup_failure
    if failed is None:
        return []
    index = result.commands.index(failed) + 1
    return [f"setup command {index} {_how(failed)}"]


def _how(failed: ExecResult) -> str:
    if failed.error:
        return f"could not run: {failed.error}"
    if failed.timed_out:
        return "timed out"
    if failed.oom_killed:
        return "ran out of memory"
    tail = failed.stderr.decode(errors="replace").strip().splitlines()[-1:]
    return f"exited {failed.exit_code}" + (f": {tail[0][:200]}" if tail else "")


def _evaluator(record: EvaluatorRecord | None) -> list[str]:
    if record is None:
        return []
    if record.timed_out:
        return [f"the evaluator did not finish within {record.timeout_ms // 1000} s"]
    if record.error:
        return [f"the evaluator could not run: {record.error}"]
    return []


def _checks(result: PlanResult, workspace: str) -> list[str]:
    found: list[str] = []
    for check in result.checks:
        if _candidates(check.path, workspace):
            continue
        if any(is_under(posixpath.normpath(check.path), where) for where in PSEUDO):
            found.append(f"{_kind(check)} `{check.key}` of {check.path}: a kernel pseudo-file")
        elif isinstance(check, FileCapture) and check.error:
            found.append(f"capture `{check.key}` of {check.path}: {check.error}")
        elif isinstance(check, DirectoryListing) and (check.truncated or check.error):
            found.append(f"listing `{check.key}` of {check.path}: {_gap(check)}")
    return found


def _gap(listing: DirectoryListing) -> str:
    """What keeps a listing from being whole, in a reason: its entry cap hit, the lines
    it left out, its error (a failure, or what it could not reach), each that applies."""
    capped = listing.capped or len(listing.entries) >= listing.max_entries or not (
        listing.error or listing.dropped)
    parts = [f"more than {listing.max_entries} entries" if capped else "",
             f"{listing.dropped} entries left out (their lines were over 8 KiB)"
             if listing.dropped else "",
             listing.error or ""]
    return "; ".join(part for part in parts if part)


def _kind(check: FileCapture | DirectoryListing) -> str:
    return "capture" if isinstance(check, FileCapture) else "listing"


def _candidates(path: str, workspace: str) -> bool:
    """Whether ``path`` (as the pack declared it) is somewhere the candidate may write."""
    if not path.startswith("/"):
        return True  # relative: under the workspace
    plain = posixpath.normpath(path)
    return any(is_under(plain, where) for where in (workspace, *CANDIDATE_WRITABLE))
