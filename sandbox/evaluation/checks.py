"""Post-execution checks: file captures under AgentClash's §7.2 caps
(:class:`~sandbox.capture.CaptureBudget`) and directory listings, from a driver's reads.

One by one, each check is one :meth:`~sandbox.base.Sandbox.read_file` or
:meth:`~sandbox.base.Sandbox.list_dir`; a batching driver makes every read at once
(:meth:`~sandbox.batching.Batching.stop_and_read`), its total the budget's remaining bytes,
and the budget is charged from its answers exactly as one by one.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from evalfleet.sandbox import batching
from evalfleet.sandbox.base import Sandbox
from evalfleet.sandbox.batching import ListDir, Read, ReadFile, Reads
from evalfleet.sandbox.capture import CaptureBudget, CaptureCheck, Check, ListingCheck
from evalfleet.sandbox.paths import PathRejected, sandbox_path
from evalfleet.sandbox.results import DirectoryListing, FileCapture, FileRead, Listing

#: A check's result, in the plan's order.
Result = FileCapture | DirectoryListing


def capture(sandbox: Sandbox, check: CaptureCheck, budget: CaptureBudget) -> FileCapture:
    """Capture one file under the §7.2 caps, charging ``budget``.

    Raises:
        SandboxUnavailable: the engine or the container is gone.
    """
    try:
        path = sandbox_path(check.path, sandbox.profile.workdir)
    except PathRejected as rejected:
        return FileCapture(key=check.key, path=check.path, exists=False, error=str(rejected))
    limit = budget.limit_for(check.max_size_bytes)
    return budget.record(check, check.path, sandbox.read_file(path, max(limit, 0)), limit)


def list_directory(sandbox: Sandbox, check: ListingCheck) -> DirectoryListing:
    """List one directory under the profile's entry cap.

    Raises:
        SandboxUnavailable: the engine or the container is gone.
    """
    cap = sandbox.profile.limits.listing_entries
    try:
        listing = sandbox.list_dir(sandbox_path(check.path, sandbox.profile.workdir), cap)
    except PathRejected as rejected:
        listing = Listing(error=str(rejected))
    return listed(check, listing, cap)


def listed(check: ListingCheck, listing: Listing, cap: int) -> DirectoryListing:
    """The listing check's result from the driver's ``listing`` (made under ``cap``)."""
    return DirectoryListing(key=check.key, path=check.path, entries=listing.entries,
                            max_entries=cap, truncated=listing.truncated, error=listing.error,
                            dropped=listing.dropped, capped=listing.capped)


def collect(sandbox: Sandbox, checks: Sequence[Check], budget: CaptureBudget,
            reads: Reads | None = None) -> tuple[Result, ...]:
    """Stop the candidate, then run every check in order under one ``budget``: the reads
    at once where the driver can (``reads``: :func:`reads_of` these checks, when built
    before), else one by one.

    Raises:
        SandboxUnavailable: the engine or the container is gone.
    """
    asked = reads or reads_of(sandbox, checks, budget)
    found = batching.stop_and_read(sandbox, asked.reads, asked.total_bytes)
    if found is None:
        sandbox.stop_candidate()
        return tuple(one(sandbox, check, budget) for check in checks)
    answers = iter(found)
    return tuple(_result(sandbox, check, budget, answers) for check in checks)


def _refused(sandbox: Sandbox, check: Check) -> bool:
    try:
        sandbox_path(check.path, sandbox.profile.workdir)
    except PathRejected:
        return True
    return False


def one(sandbox: Sandbox, check: Check, budget: CaptureBudget) -> Result:
    """One check, as :func:`capture` or :func:`list_directory`."""
    if isinstance(check, CaptureCheck):
        return capture(sandbox, check, budget)
    return list_directory(sandbox, check)


def reads_of(sandbox: Sandbox, checks: Sequence[Check], budget: CaptureBudget) -> Reads:
    """The driver's reads for ``checks`` (none for a path refused before any read), under
    the budget's remaining bytes."""
    found: list[Read] = []
    for check in checks:
        try:
            path = sandbox_path(check.path, sandbox.profile.workdir)
        except PathRejected:
            continue
        found.append(ListDir(path) if isinstance(check, ListingCheck)
                     else ReadFile(path, CaptureBudget.per_file(check.max_size_bytes)))
    return Reads(tuple(found), budget.remaining)


def _result(sandbox: Sandbox, check: Check, budget: CaptureBudget,
            answers: Iterator[FileRead | Listing]) -> Result:
    """A check's result from the next of the driver's ``answers`` (an iterator), or from
    its path's refusal (no read was made)."""
    if _refused(sandbox, check):
        return one(sandbox, check, budget)  # refused before any read: nothing is read
    answer = next(answers)
    if isinstance(check, ListingCheck) and isinstance(answer, Listing):
        return listed(check, answer, sandbox.profile.limits.listing_entries)
    if isinstance(check, CaptureCheck) and isinstance(answer, FileRead):
        return budget.record(check, check.path, answer, budget.limit_for(check.max_size_bytes))
    return one(sandbox, check, budget)  # an answer out of step: the driver broke the contract
