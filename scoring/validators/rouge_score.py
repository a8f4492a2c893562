"""rouge_score: ROUGE-1, ROUGE-2 or ROUGE-L F-beta (docs/scoring.md §5.13). Strict config, graded.

Same text prep and reference parsing as BLEU. rouge-1/2: clipped n-gram overlap,
P = matches / candidate n-grams, R = matches / reference n-grams (0 for an empty
denominator). rouge-l: token LCS, P = LCS/|cand|, R = LCS/|ref|. F_β = (1+β²)PR/(β²P+R),
0 when P = R = 0. Several references ⇒ the best F.
"""

from __future__ import annotations

from typing import Any

from ..compat.generation import (
    clipped_matches,
    f_beta,
    lcs_length,
    ngram_counts,
    safe_ratio,
)
from ..compat.textnorm import split_words
from ..errors import FieldError
from .base import CheckInput, Kind, Outcome
from .graded import (
    GoStrictConfig,
    clamp_threshold,
    graded_outcome,
    positive_errors,
    prepared_texts,
    threshold_errors,
)

DEFAULT_THRESHOLD = 0.3
VARIANTS = ("rouge-1", "rouge-2", "rouge-l")


class RougeScoreConfig(GoStrictConfig):
    threshold: float | None = None
    variant: str = "rouge-l"
    beta: float | None = None
    """F-beta weight of recall (default 1)."""
    case_insensitive: bool = False
    normalize: bool = False


def rouge(candidate: list[str], reference: list[str], variant: str,
          beta: float) -> tuple[float, float, float]:
    """(precision, recall, F-beta) of one candidate against one reference."""
    if variant in ("rouge-1", "rouge-2"):
        n = 1 if variant == "rouge-1" else 2
        matches = clipped_matches(ngram_counts(candidate, n), ngram_counts(reference, n))
        precision = safe_ratio(matches, max(len(candidate) - n + 1, 0))
        recall = safe_ratio(matches, max(len(reference) - n + 1, 0))
    elif variant == "rouge-l":
        lcs = lcs_length(candidate, reference)
        precision, recall = safe_ratio(lcs, len(candidate)), safe_ratio(lcs, len(reference))
    else:
        return 0.0, 0.0, 0.0
    return precision, recall, f_beta(precision, recall, beta)


def check(given: CheckInput) -> Outcome:
    config: RougeScoreConfig = given.config
    texts = prepared_texts(given, "rouge_score")
    if isinstance(texts, Outcome):
        return texts
    text, references = texts
    candidate = split_words(text)
    variant, beta = config.variant or "rouge-l", 1.0 if config.beta is None else config.beta
    best, evidence = -1.0, dict[str, Any]()
    for reference in map(split_words, references):
        precision, recall, score = rouge(candidate, reference, variant, beta)
        if score > best:
            best, evidence = score, {"precision": precision, "recall": recall,
                                     "reference_length": len(reference)}
    threshold = clamp_threshold(config.threshold, DEFAULT_THRESHOLD)
    return graded_outcome(best, threshold, **evidence,
                          variant=variant, beta=beta, f_score=best,
                          candidate_length=len(candidate))


def config_rules(config: Any, path: str) -> list[FieldError]:
    """threshold, variant name, beta > 0."""
    errors = threshold_errors(config.threshold, path)
    if config.variant not in ("", *VARIANTS):
        errors.append(FieldError(f"{path}.variant",
                                 'must be "rouge-1", "rouge-2", or "rouge-l"'))
    return errors + positive_errors(config.beta, f"{path}.beta")


KIND = Kind("rouge_score", check, RougeScoreConfig, "strict", config_rules=config_rules,
            graded=True, go_struct="rougeScoreConfig")
