"""A run's rating facts: category and S, rating change, verification, the attempt and
memoryless echoed, benchmark grade and the verified bonus (docs/scoring.md §C9)."""

from __future__ import annotations

from typing import Any

import pytest

from evalfleet.scoring import Scorecard
from evalfleet.tasks.evaluation.rating import expired_rating, rating, rerated
from evalfleet.tasks.messages import Rating, RunRequest


def request(**fields: Any) -> RunRequest:
    """A request by reference, with the rating fields given."""
    return RunRequest(run_id="r", pack_ref="p", **fields)


def card(result: str | None) -> Scorecard:
    """A scorecard whose ``result`` is ``result``."""
    return Scorecard(status="complete", strategy="weighted", overall_score=None, passed=None,
                     overall_reason="", validity="valid" if result else "invalid",
                     result=result)


@pytest.mark.parametrize(("result", "category", "elo_score"), [
    ("win", "win", 1.0), ("draw", "draw", 0.5), ("loss", "loss", 0.0)])
def test_the_scorecards_result_is_the_category_and_its_s(result: str, category: str,
                                                         elo_score: float) -> None:
    """win / draw / loss give S = 1 / 0.5 / 0, and every one changes the rating."""
    rated = rating(request(), card(result), verified=False)

    assert (rated.category, rated.elo_score, rated.rating_change) == (category, elo_score, True)


@pytest.mark.parametrize(("verified", "attempt", "multiplier"), [
    (True, 1, 1.2), (True, 2, 1.1), (True, 17, 1.1), (True, None, None),
    (False, 1, None), (False, 2, None), (False, None, None)])
@pytest.mark.parametrize("result", ["win", "draw", "loss"])
def test_the_verified_bonus_needs_verification_and_a_known_attempt(
        result: str, verified: bool, attempt: int | None, multiplier: float | None) -> None:
    """1.2 verified on the first attempt, 1.1 on a later one, None otherwise; stated on a
    loss too (it applies to a positive change only: the platform's to know)."""
    rated = rating(request(attempt_number=attempt), card(result), verified)

    assert (rated.multiplier, rated.verified, rated.attempt_number) == (
        multiplier, verified, attempt)


@pytest.mark.parametrize(("verified", "attempt", "memoryless", "grade"), [
    (True, 1, True, True),
    (True, 2, True, False), (True, 1, False, False), (False, 1, True, False),
    (True, None, True, None), (True, 1, None, None), (True, None, None, None),
    (True, 2, None, False), (True, None, False, False), (False, None, None, False)])
def test_benchmark_grade_is_false_once_a_fact_is_false_else_unknown_when_one_is(
        verified: bool, attempt: int | None, memoryless: bool | None,
        grade: bool | None) -> None:
    """Verified + memoryless + attempt 1: any known-false fact decides it; otherwise an
    unknown one leaves it None."""
    rated = rating(request(attempt_number=attempt, memoryless=memoryless), card("win"),
                   verified)

    assert (rated.benchmark_grade, rated.memoryless) == (grade, memoryless)


def test_a_no_contest_has_no_category_and_changes_nothing() -> None:
    """A scorecard with no result (no contest): no category, no S, no change, no
    multiplier, even verified on a first attempt; the facts are still stated."""
    rated = rating(request(attempt_number=1, memoryless=True), card(None), verified=True)

    assert rated == Rating(category=None, elo_score=None, rating_change=False, verified=True,
                           attempt_number=1, memoryless=True, benchmark_grade=True,
                           multiplier=None)


@pytest.mark.parametrize(("attempt", "memoryless"), [(1, True), (3, False), (None, None)])
def test_an_expired_run_is_a_draw_with_no_rating_change(attempt: int | None,
                                                        memoryless: bool | None) -> None:
    """``expired``: S = 0.5 (a draw), no change, nothing verified, no multiplier, not
    benchmark-grade; the request's facts echoed."""
    rated = expired_rating(request(attempt_number=attempt, memoryless=memoryless))

    assert rated == Rating(category="expired", elo_score=0.5, rating_change=False,
                           verified=False, attempt_number=attempt, memoryless=memoryless,
                           benchmark_grade=False, multiplier=None)


def test_a_rescored_result_keeps_the_requests_facts_and_takes_todays_result() -> None:
    """``rerated``: the echoed attempt and memoryless stay, the category follows the new
    scorecard; a result stored without a rating stays without one."""
    stored = rating(request(attempt_number=2, memoryless=False), card("loss"), verified=True)

    again = rerated(stored, card("win"), verified=True)

    assert again is not None
    assert (again.category, again.attempt_number, again.memoryless, again.multiplier) == (
        "win", 2, False, 1.1)
    assert rerated(None, card("win"), verified=True) is None
