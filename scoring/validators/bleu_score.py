"""bleu_score: sentence BLEU against one or several references (docs/scoring.md §5.12). Strict,
graded.

AgentClash's BLEU is corpus-free and non-standard in two ways: only orders
1..min(max_ngram, candidate length) are computed (the geometric mean is over those), and
``method1`` smoothing replaces a zero precision at n > 1 by 1/(total + 1). Precision is
clipped by the maximum count over references; the brevity penalty uses the reference
length closest to the candidate's (ties → the shorter). An empty candidate scores 1 only
against exactly one empty reference.

Beyond AgentClash (off by default): ``implementation: "sacrebleu"`` scores with
``sacrebleu.sentence_bleu`` (its defaults: 13a tokenizer, exp smoothing, effective order),
scaled to 0–1. ``normalize``/``case_insensitive`` and the reference parsing still apply;
``max_ngram`` and ``smoothing`` are then not used.
"""

from __future__ import annotations

import math
from typing import Any

import sacrebleu

from ..compat.generation import clipped_matches, ngram_counts
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
SMOOTHINGS = ("none", "method1")
IMPLEMENTATIONS = ("agentclash", "sacrebleu")


class BleuScoreConfig(GoStrictConfig):
    threshold: float | None = None
    max_ngram: int = 4
    smoothing: str = "none"
    case_insensitive: bool = False
    normalize: bool = False
    implementation: str = "agentclash"
    """evalfleet extension: ``agentclash`` (default) or ``sacrebleu``."""


def bleu(candidate: list[str], references: list[list[str]], max_ngram: int,
         smoothing: str) -> tuple[float, dict[str, Any]]:
    """AgentClash's sentence BLEU of token lists; (score, evidence)."""
    lengths = [len(r) for r in references]
    if not candidate:
        score = 1.0 if len(references) == 1 and not references[0] else 0.0
        return score, {"candidate_length": 0, "reference_lengths": lengths,
                       "brevity_penalty": score, "precisions": []}
    max_order = min(max_ngram, len(candidate))
    precisions = [_precision(candidate, references, n, smoothing)
                  for n in range(1, max_order + 1)]
    geo_mean = _geometric_mean(precisions, max_order)
    reference_length = closest_length(len(candidate), lengths)
    penalty = brevity_penalty(len(candidate), reference_length)
    return penalty * geo_mean, {
        "candidate_length": len(candidate), "reference_length": reference_length,
        "reference_lengths": lengths, "computed_orders": max_order,
        "brevity_penalty": penalty, "precisions": precisions}


def _precision(candidate: list[str], references: list[list[str]], n: int,
               smoothing: str) -> float:
    total = len(candidate) - n + 1
    best: dict[str, int] = {}
    for reference in references:
        for gram, count in ngram_counts(reference, n).items():
            best[gram] = max(best.get(gram, 0), count)
    matches = clipped_matches(ngram_counts(candidate, n), best)
    if matches > 0:
        return matches / total
    return 1.0 / (total + 1) if smoothing == "method1" and n > 1 else 0.0


def _geometric_mean(precisions: list[float], max_order: int) -> float:
    if any(p == 0 for p in precisions):
        return 0.0
    log_sum = sum(math.log(p) for p in precisions)
    return math.exp(log_sum / max_order) if max_order else math.nan


def closest_length(candidate_length: int, reference_lengths: list[int]) -> int:
    """The reference length closest to the candidate's; ties go to the shorter."""
    return min(reference_lengths, key=lambda r: (abs(candidate_length - r), r))


def brevity_penalty(candidate_length: int, reference_length: int) -> float:
    """exp(1 − r/c) when the candidate is shorter than the reference, else 1."""
    if candidate_length < reference_length:
        return math.exp(1 - reference_length / candidate_length)
    return 1.0


def check(given: CheckInput) -> Outcome:
    config: BleuScoreConfig = given.config
    texts = prepared_texts(given, "bleu_score")
    if isinstance(texts, Outcome):
        return texts
    candidate, references = texts
    threshold = clamp_threshold(config.threshold, DEFAULT_THRESHOLD)
    if config.implementation == "sacrebleu":
        score = min(sacrebleu.sentence_bleu(candidate, references).score / 100, 1.0)
        evidence: dict[str, Any] = {"implementation": "sacrebleu"}
    elif config.implementation == "agentclash":
        score, evidence = bleu(split_words(candidate), [split_words(r) for r in references],
                               config.max_ngram, config.smoothing or "none")
    else:
        return Outcome.error(f"invalid bleu_score config: unsupported implementation "
                             f"{config.implementation!r}")
    return graded_outcome(score, threshold, **evidence,
                          max_ngram=config.max_ngram, smoothing=config.smoothing)


def config_rules(config: Any, path: str) -> list[FieldError]:
    """threshold, max_ngram > 0, smoothing and implementation names."""
    errors = threshold_errors(config.threshold, path)
    errors += positive_errors(config.max_ngram, f"{path}.max_ngram")
    if config.smoothing not in ("", *SMOOTHINGS):
        errors.append(FieldError(f"{path}.smoothing", 'must be "none" or "method1"'))
    return errors + implementation_errors(config.implementation, path)


def implementation_errors(implementation: str, path: str) -> list[FieldError]:
    """The evalfleet extension field must name a known implementation."""
    if implementation in IMPLEMENTATIONS:
        return []
    return [FieldError(f"{path}.implementation", 'must be "agentclash" or "sacrebleu"')]


KIND = Kind("bleu_score", check, BleuScoreConfig, "strict", config_rules=config_rules,
            graded=True, go_struct="bleuScoreConfig")
