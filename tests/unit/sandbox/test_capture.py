"""Capture caps: every number in docs/scoring.md §7.2, through the fake sandbox."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalfleet.sandbox.capture import (
    DEFAULT_MAX_FILE_BYTES,
    DEFAULT_MAX_TOTAL_BYTES,
    CaptureBudget,
    CaptureCheck,
)
from evalfleet.sandbox.command import SeedFile
from evalfleet.sandbox.evaluation import checks
from evalfleet.sandbox.profile import Limits, Profile
from evalfleet.sandbox.results import FileRead
from evalfleet.sandbox.testing.fake import FakeSandbox
from evalfleet.tasks.evaluation.recording import file_captured

MiB = 1024 * 1024


@pytest.fixture
def sandbox() -> FakeSandbox:
    limits = Limits(seed_bytes=64 * MiB, workspace_bytes=64 * MiB)
    return FakeSandbox(Profile(name="caps", image="fake", limits=limits))


def test_constants_are_agentclash_defaults() -> None:
    """1 MiB per file and 10 MiB per run, in bytes."""
    assert (DEFAULT_MAX_FILE_BYTES, DEFAULT_MAX_TOTAL_BYTES) == (1_048_576, 10_485_760)


def test_default_per_file_cap_cuts_at_one_mib(sandbox: FakeSandbox) -> None:
    """A 1 MiB + 1 file keeps exactly 1,048,576 bytes, size is the full length."""
    sandbox.write_files([SeedFile("f", b"x" * (MiB + 1))])
    capture = checks.capture(sandbox, CaptureCheck("k", "f"), CaptureBudget())
    assert (capture.size, len(capture.content or b""), capture.truncated) == (MiB + 1, MiB, True)


def test_file_exactly_at_cap_is_not_truncated(sandbox: FakeSandbox) -> None:
    """A file of exactly the cap is whole."""
    sandbox.write_files([SeedFile("f", b"x" * MiB)])
    capture = checks.capture(sandbox, CaptureCheck("k", "f"), CaptureBudget())
    assert (len(capture.content or b""), capture.truncated) == (MiB, False)


@pytest.mark.parametrize(("max_size", "kept"), [(None, MiB), (0, MiB), (10, 10),
                                                (2 * MiB, 2 * MiB)])
def test_max_size_bytes_replaces_the_default(sandbox: FakeSandbox, max_size: int | None,
                                             kept: int) -> None:
    """0/absent ⇒ 1 MiB; a positive value replaces it, and may exceed 1 MiB."""
    sandbox.write_files([SeedFile("f", b"y" * (3 * MiB))])
    capture = checks.capture(sandbox, CaptureCheck("k", "f", max_size_bytes=max_size),
                             CaptureBudget())
    assert (len(capture.content or b""), capture.truncated, capture.size) == (kept, True, 3 * MiB)


def test_budget_counts_full_sizes_not_kept_bytes(sandbox: FakeSandbox) -> None:
    """Three 4 MiB files capped at 1 MiB each charge 12 MiB; the third still gets its cap
    of min(1 MiB, 10 − 8 = 2 MiB); a fourth finds the budget spent: "" and truncated."""
    sandbox.write_files([SeedFile(f"f{i}", b"z" * (4 * MiB)) for i in range(3)])
    sandbox.write_files([SeedFile("small", b"s")])
    budget = CaptureBudget()
    captures = [checks.capture(sandbox, CaptureCheck(f"k{i}", f"f{i}"), budget) for i in range(3)]
    assert [len(c.content or b"") for c in captures] == [MiB, MiB, MiB]
    assert budget.charged == 12 * MiB and budget.remaining == -2 * MiB
    spent = checks.capture(sandbox, CaptureCheck("s", "small"), budget)
    assert (spent.exists, spent.size, spent.content, spent.truncated) == (True, 1, b"", True)


def test_per_file_cap_is_bounded_by_remaining_budget(sandbox: FakeSandbox) -> None:
    """After 9.5 MiB, a 2 MiB max_size_bytes file keeps only the 0.5 MiB left."""
    sandbox.write_files([SeedFile("a", b"a" * (9 * MiB + MiB // 2)), SeedFile("b", b"b" * 3 * MiB)])
    budget = CaptureBudget()
    checks.capture(sandbox, CaptureCheck("a", "a", max_size_bytes=10 * MiB), budget)
    b = checks.capture(sandbox, CaptureCheck("b", "b", max_size_bytes=2 * MiB), budget)
    assert (len(b.content or b""), b.truncated, b.size) == (MiB // 2, True, 3 * MiB)


def test_budget_exactly_spent_gives_empty_truncated_content(sandbox: FakeSandbox) -> None:
    """Remaining budget 0 ⇒ content "" and truncated, even for an empty file."""
    sandbox.write_files([SeedFile("full", b"f" * (10 * MiB)), SeedFile("empty", b"")])
    budget = CaptureBudget()
    whole = checks.capture(sandbox, CaptureCheck("full", "full", max_size_bytes=10 * MiB), budget)
    assert (len(whole.content or b""), whole.truncated) == (10 * MiB, False)
    empty = checks.capture(sandbox, CaptureCheck("e", "empty"), budget)
    assert (empty.content, empty.truncated, empty.size) == (b"", True, 0)


def test_missing_file_charges_nothing_and_has_no_content(sandbox: FakeSandbox) -> None:
    """Missing ⇒ ``{exists: false, size: 0}``, no content, no truncated key in the event."""
    budget = CaptureBudget()
    capture = checks.capture(sandbox, CaptureCheck("k", "nope"), budget)
    assert budget.charged == 0
    assert file_captured(capture) == {"key": "k", "path": "nope", "exists": False, "size": 0}


def test_byte_cut_may_split_utf8(sandbox: FakeSandbox) -> None:
    """The cut is in bytes; the event text shows the broken sequence as U+FFFD."""
    sandbox.write_files([SeedFile("u", "é" * 3)])
    capture = checks.capture(sandbox, CaptureCheck("k", "u", max_size_bytes=3), CaptureBudget())
    assert capture.content == "é".encode() + b"\xc3"
    assert file_captured(capture) == {"key": "k", "path": "u", "exists": True, "size": 6,
                                      "content": "é\ufffd", "truncated": True}


@given(sizes=st.lists(st.integers(min_value=0, max_value=4 * MiB), max_size=8),
       caps=st.lists(st.one_of(st.none(), st.integers(min_value=0, max_value=3 * MiB)),
                     min_size=8, max_size=8))
def test_budget_properties(sizes: list[int], caps: list[int | None]) -> None:
    """Kept ≤ per-file cap and ≤ what was left; charged is the sum of full sizes."""
    budget = CaptureBudget()
    for size, cap in zip(sizes, caps, strict=False):
        left = budget.remaining
        limit = budget.limit_for(cap)
        read = FileRead(exists=True, size=size, content=b"q" * min(size, max(limit, 0)))
        capture = budget.record(CaptureCheck("k", "p", max_size_bytes=cap), "p", read, limit)
        kept = len(capture.content or b"")
        assert kept <= (cap or DEFAULT_MAX_FILE_BYTES) and kept <= max(left, 0)
        assert capture.truncated == (left <= 0 or size > limit)
    assert budget.charged == sum(sizes)
