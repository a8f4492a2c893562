"""chrf_score: character n-gram F-beta (docs/scoring.md §5.14). Strict config, graded.

Characters are code points with all (Unicode) whitespace removed. Per reference the
maximum order is min(char_order, |cand|, |ref|); 0 ⇒ score 1 when both are empty, else 0.
Otherwise, for n = 1..max order, clipped char n-gram precision and recall; their
arithmetic means give F_β (β default 2). Several references ⇒ the best score.

Beyond AgentClash (off by default): ``implementation: "sacrebleu"`` scores with
``sacrebleu.sentence_chrf`` (its defaults: char order 6, β 2, no word n-grams), scaled
to 0–1; the text prep and reference parsing still apply, ``char_order``/``beta`` are
then not used.
"""

from __future__ import annotations

from typing import Any

import sacrebleu

from ..compat.generation import (
    char_ngram_counts,
    clipped_matches,
    f_beta,
    safe_ratio,
)
from ..compat.textnorm import GO_WHITESPACE
from ..errors import FieldError
from .base import CheckInput, Kind, Outcome
from .bleu_score import implementation_errors
from .graded import (
    GoStrictConfig,
    clamp_threshold,
    graded_outcome,
    positive_errors,
    prepared_texts,
    threshold_errors,
)

DEFAULT_THRESHOLD = 0.3
_DROP_SPACE = str.maketrans("", "", GO_WHITESPACE)


class ChrfScoreConfig(GoStrictConfig):
    threshold: float | None = None
    char_order: int = 6
    beta: float | None = None
    """F-beta weight of recall (default 2)."""
    case_insensitive: bool = False
    normalize: bool = False
    implementation: str = "agentclash"
    """evalfleet extension: ``agentclash`` (default) or ``sacrebleu``."""


def chrf(candidate: str, reference: str, char_order: int, beta: float) -> dict[str, Any]:
    """chrF of whitespace-free strings: the score and its parts."""
    max_order = min(char_order, len(candidate), len(reference))
    if max_order == 0:
        score = 1.0 if not candidate and not reference else 0.0
        return {"f_score": score, "precision": score, "recall": score, "computed_orders": 0}
    precisions, recalls = [], []
    for n in range(1, max_order + 1):
        cand, ref = char_ngram_counts(candidate, n), char_ngram_counts(reference, n)
        matches = clipped_matches(cand, ref)
        precisions.append(safe_ratio(matches, max(len(candidate) - n + 1, 0)))
        recalls.append(safe_ratio(matches, max(len(reference) - n + 1, 0)))
    precision, recall = _mean(precisions), _mean(recalls)
    return {"f_score": f_beta(precision, recall, beta), "precision": precision,
            "recall": recall, "computed_orders": max(max_order, 0)}


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def best_chrf(candidate: str, references: list[str], char_order: int,
              beta: float) -> tuple[float, dict[str, Any]]:
    """The best chrF over the references, with that reference's parts."""
    best, evidence = -1.0, {}
    cand = candidate.translate(_DROP_SPACE)
    for reference in references:
        ref = reference.translate(_DROP_SPACE)
        parts = chrf(cand, ref, char_order, beta)
        if parts["f_score"] > best:
            best = parts["f_score"]
            evidence = {**parts, "candidate_length": len(cand), "reference_length": len(ref)}
    return best, evidence


def check(given: CheckInput) -> Outcome:
    config: ChrfScoreConfig = given.config
    texts = prepared_texts(given, "chrf_score")
    if isinstance(texts, Outcome):
        return texts
    candidate, references = texts
    beta = 2.0 if config.beta is None else config.beta
    if config.implementation == "sacrebleu":
        score = min(sacrebleu.sentence_chrf(candidate, references).score / 100, 1.0)
        evidence: dict[str, Any] = {"implementation": "sacrebleu"}
    elif config.implementation == "agentclash":
        score, evidence = best_chrf(candidate, references, config.char_order, beta)
    else:
        return Outcome.error(f"invalid chrf_score config: unsupported implementation "
                             f"{config.implementation!r}")
    threshold = clamp_threshold(config.threshold, DEFAULT_THRESHOLD)
    return graded_outcome(score, threshold, **evidence,
                          char_order=config.char_order, beta=beta)


def config_rules(config: Any, path: str) -> list[FieldError]:
    """threshold, char_order > 0, beta > 0, implementation name."""
    errors = threshold_errors(config.threshold, path)
    errors += positive_errors(config.char_order, f"{path}.char_order")
    errors += positive_errors(config.beta, f"{path}.beta")
    return errors + implementation_errors(config.implementation, path)


KIND = Kind("chrf_score", check, ChrfScoreConfig, "strict", config_rules=config_rules,
            graded=True, go_struct="chrfScoreConfig")
