"""A run's :class:`~tasks.messages.Rating`: what a platform's rating update needs (pure).

Clawdiators maps the 0–1000 score to win, draw or loss (S = 1, 0.5, 0), records an expired
match as a draw with no rating change, and multiplies a positive change of a verified
match by 1.2 on the first attempt and 1.1 on a later one (docs/scoring.md §C9). The fleet
states those facts; the platform keeps the ratings.

:func:`rating` is the pipeline's, for every scored run; :func:`expired_rating` is the
worker's, for a run its match's ``expires_at`` passed before it started; :func:`rerated`
is ``evalfleet rescore``'s.
"""

from __future__ import annotations

from typing import Final

from evalfleet.scoring import Scorecard

from ..messages import Rating, RatingCategory, RunRequest

#: Clawdiators' S for each category (an expired match is a draw).
ELO_SCORES: Final[dict[RatingCategory, float]] = {
    "win": 1.0, "draw": 0.5, "loss": 0.0, "expired": 0.5}
#: The verified bonus: on the first attempt ("benchmark-grade"), and on any later one.
FIRST_ATTEMPT_MULTIPLIER: Final = 1.2
LATER_ATTEMPT_MULTIPLIER: Final = 1.1


def rating(request: RunRequest, scorecard: Scorecard, verified: bool) -> Rating:
    """The rating facts of a scored run: its scorecard's result, and ``verified``
    (:func:`scoring.trajectory_verified` of the run's events). A scorecard with no result
    (no contest) has no category and changes no rating."""
    return rated(scorecard.result, verified, request.attempt_number, request.memoryless)


def expired_rating(request: RunRequest) -> Rating:
    """The rating facts of a run not started by its match's ``expires_at``: ``expired``,
    a draw (S = 0.5) with no rating change, nothing verified, no multiplier."""
    return rated("expired", False, request.attempt_number, request.memoryless)


def rerated(stored: Rating | None, scorecard: Scorecard, verified: bool) -> Rating | None:
    """A stored result's rating once its scorecard is computed again (``evalfleet
    rescore``): today's category and verification, the attempt and memoryless it echoed.
    None stays None: a result stored before ratings were, whose request is not known."""
    if stored is None:
        return None
    return rated(scorecard.result, verified, stored.attempt_number, stored.memoryless)


def rated(category: RatingCategory | None, verified: bool, attempt_number: int | None,
          memoryless: bool | None) -> Rating:
    """The rating facts from the run's category, its verification and the request's
    ``attempt_number`` and ``memoryless`` (see :class:`~tasks.messages.Rating`)."""
    change = category is not None and category != "expired"
    return Rating(
        category=category, elo_score=ELO_SCORES[category] if category else None,
        rating_change=change, verified=verified, attempt_number=attempt_number,
        memoryless=memoryless, benchmark_grade=benchmark_grade(verified, attempt_number,
                                                               memoryless),
        multiplier=multiplier(verified, attempt_number) if change else None)


def multiplier(verified: bool, attempt_number: int | None) -> float | None:
    """Clawdiators' multiplier of a positive change: 1.2 verified on the first attempt,
    1.1 verified on a later one, None unverified or with the attempt unknown."""
    if not verified or attempt_number is None:
        return None
    return FIRST_ATTEMPT_MULTIPLIER if attempt_number == 1 else LATER_ATTEMPT_MULTIPLIER


def benchmark_grade(verified: bool, attempt_number: int | None,
                    memoryless: bool | None) -> bool | None:
    """Verified, memoryless and on the first attempt: false once one is known false,
    None when none is but memoryless or the attempt is unknown."""
    if not verified or memoryless is False or (attempt_number or 1) > 1:
        return False
    if memoryless is None or attempt_number is None:
        return None
    return True
