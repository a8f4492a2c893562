"""token_f1: bag-of-tokens F1 (SQuAD style) against a threshold (docs/scoring.md §5.10). Strict,
graded.

Pipeline: ``[trim, lowercase, collapse_whitespace]`` if ``normalize``, then
``strip_punctuation`` if ``remove_punctuation``, then ``remove_articles`` if
``remove_articles``, then — only if anything was added — ``collapse_whitespace, trim``.
Tokens split on Unicode whitespace; overlap is the multiset intersection. Both empty ⇒ 1,
one empty ⇒ 0, else F1 = 2PR / (P + R) (0 when P or R is 0).
"""

from __future__ import annotations

from collections import Counter
from typing import Any, NamedTuple

from ..compat.textnorm import DEFAULT_PIPELINE, apply_pipeline, split_words
from ..errors import FieldError
from .base import CheckInput, Kind, Outcome
from .graded import GoStrictConfig, clamp_threshold, graded_outcome, threshold_errors

DEFAULT_THRESHOLD = 0.5


class TokenF1Config(GoStrictConfig):
    threshold: float | None = None
    normalize: bool = False
    remove_articles: bool = False
    remove_punctuation: bool = False


class F1(NamedTuple):
    """Token F1 and its parts."""

    precision: float
    recall: float
    score: float
    overlap: int


def pipeline_of(config: TokenF1Config) -> list[str]:
    """The normalization steps the flags select (the construction rule above)."""
    steps = list(DEFAULT_PIPELINE) if config.normalize else []
    steps += ["strip_punctuation"] if config.remove_punctuation else []
    steps += ["remove_articles"] if config.remove_articles else []
    return [*steps, "collapse_whitespace", "trim"] if steps else []


def token_f1(prediction: list[str], reference: list[str]) -> F1:
    """Multiset-overlap F1 of two token lists."""
    if not prediction and not reference:
        return F1(1.0, 1.0, 1.0, 0)
    if not prediction or not reference:
        return F1(0.0, 0.0, 0.0, 0)
    overlap = sum((Counter(prediction) & Counter(reference)).values())
    precision, recall = overlap / len(prediction), overlap / len(reference)
    if precision == 0 or recall == 0:
        return F1(precision, recall, 0.0, overlap)
    return F1(precision, recall, 2 * precision * recall / (precision + recall), overlap)


def check(given: CheckInput) -> Outcome:
    config: TokenF1Config = given.config
    steps = pipeline_of(config)
    actual = apply_pipeline(given.actual or "", steps)
    expected = apply_pipeline(given.expected or "", steps)
    prediction, reference = split_words(actual), split_words(expected)
    f1 = token_f1(prediction, reference)
    threshold = clamp_threshold(config.threshold, DEFAULT_THRESHOLD)
    return graded_outcome(f1.score, threshold, pipeline=steps, normalized_actual=actual,
        normalized_expected=expected, prediction_token_count=len(prediction),
        reference_token_count=len(reference), overlap_token_count=f1.overlap,
        precision=f1.precision, recall=f1.recall)


def config_rules(config: Any, path: str) -> list[FieldError]:
    """threshold in [0, 1]."""
    return threshold_errors(config.threshold, path)


KIND = Kind("token_f1", check, TokenF1Config, "strict", config_rules=config_rules, graded=True,
            go_struct="tokenF1Config")
