"""fuzzy_match: Levenshtein similarity against a threshold (docs/scoring.md §5.7). Strict config,
graded.

similarity = (|a| + |b| − lev(a, b)) / (|a| + |b|) over code points, where ``lev`` is the
classic edit distance with substitution cost 1 (``rapidfuzz.distance.Levenshtein``), not
rapidfuzz's ``fuzz.ratio`` (Indel distance, substitution cost 2): "abc" vs "xyz" is 0.5
here, 0.0 there. Both empty ⇒ 1.0. ``normalize`` (trim + collapse ASCII whitespace) runs
before ``case_insensitive`` (full case folding). Either prepared side longer than 100,000
code points is an error.
"""

from __future__ import annotations

from typing import Any

from rapidfuzz.distance import Levenshtein

from ..compat.textnorm import prepare
from ..errors import FieldError
from .base import CheckInput, Kind, Outcome
from .graded import GoStrictConfig, clamp_threshold, graded_outcome, threshold_errors

MAX_CODE_POINTS = 100_000
DEFAULT_THRESHOLD = 0.8


class FuzzyMatchConfig(GoStrictConfig):
    threshold: float | None = None
    """Minimum similarity to pass (default 0.8; clamped to [0, 1] at run time)."""
    case_insensitive: bool = False
    normalize: bool = False
    """Trim and collapse ASCII whitespace runs (applied before case folding)."""


def similarity(a: str, b: str) -> tuple[float, int]:
    """(similarity, edit distance) of two strings, AgentClash's formula."""
    distance = Levenshtein.distance(a, b)
    total = len(a) + len(b)
    return (1.0 if total == 0 else (total - distance) / total), distance


def check(given: CheckInput) -> Outcome:
    config: FuzzyMatchConfig = given.config
    threshold = clamp_threshold(config.threshold, DEFAULT_THRESHOLD)
    prep = {"normalize": config.normalize, "case_insensitive": config.case_insensitive}
    a, b = prepare(given.actual or "", **prep), prepare(given.expected or "", **prep)
    if len(a) > MAX_CODE_POINTS or len(b) > MAX_CODE_POINTS:
        return Outcome.error(
            f"fuzzy_match input too large: inputs exceed {MAX_CODE_POINTS} runes")
    score, distance = similarity(a, b)
    reason = f"similarity {score:.4f} is below threshold {threshold:.4f}"
    return graded_outcome(score, threshold, reason, similarity=score, distance=distance,
                          sum_length=len(a) + len(b), **prep)


def config_rules(config: Any, path: str) -> list[FieldError]:
    """threshold in [0, 1]."""
    return threshold_errors(config.threshold, path)


KIND = Kind("fuzzy_match", check, FuzzyMatchConfig, "strict", config_rules=config_rules,
            graded=True, go_struct="fuzzyMatchConfig")
