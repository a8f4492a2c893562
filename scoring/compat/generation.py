"""Shared arithmetic of the generation validators: BLEU, ROUGE and chrF (docs/scoring.md
§5.12–§5.14).

* :func:`parse_references` — the expected text as one or several references: blank ⇒ one
  empty reference; text starting with ``[`` that is a JSON array of strings ⇒ those
  strings (``null`` elements read as ``""``, as Go's decoder does); a JSON array with any
  other element ⇒ :class:`InvalidReferences`; text starting with ``[`` that is not JSON ⇒
  the text itself; anything else ⇒ the text itself. Each reference gets the same prep as
  the candidate (:func:`scoring.compat.textnorm.prepare`).
* n-gram counting, clipped overlap, LCS (rapidfuzz, at C speed) and F-beta with IEEE float
  semantics (a zero division gives NaN/∞ as in Go, never an exception).
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from rapidfuzz.distance import LCSseq

from .textnorm import prepare, trim


class InvalidReferences(ValueError):
    """The expected text decodes to a JSON array that is not an array of strings."""


def parse_references(expected: str, *, normalize: bool, case_insensitive: bool) -> list[str]:
    """The prepared references of an expected text (rules in the module docstring).

    Raises:
        InvalidReferences: for a JSON array of non-strings, or an empty JSON array.
    """
    trimmed = trim(expected)
    references = [expected]
    if trimmed.startswith("["):
        decoded = _strict_json(trimmed)
        if isinstance(decoded, list):
            if not all(item is None or isinstance(item, str) for item in decoded):
                raise InvalidReferences("expected a JSON array of reference strings")
            references = [item or "" for item in decoded]
    elif not trimmed:
        references = [""]
    if not references:
        raise InvalidReferences("at least one reference is required")
    return [prepare(r, normalize=normalize, case_insensitive=case_insensitive)
            for r in references]


def _reject_constant(name: str) -> Any:
    raise ValueError(f"invalid JSON constant {name}")


def _strict_json(text: str) -> Any:
    """One JSON value as Go decodes it (no NaN/Infinity), or None when it is not JSON."""
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        return None


def ngram_counts(tokens: Sequence[str], n: int) -> Counter[str]:
    """Counts of the token n-grams (joined with NUL, as AgentClash keys them)."""
    if n == 1:
        return Counter(tokens)
    return Counter("\x00".join(tokens[i:i + n]) for i in range(len(tokens) - n + 1))


def char_ngram_counts(chars: str, n: int) -> Counter[str]:
    """Counts of the character n-grams of a string."""
    return Counter(chars[i:i + n] for i in range(len(chars) - n + 1))


def clipped_matches(candidate: Mapping[str, int], reference: Mapping[str, int]) -> int:
    """Σ min(candidate count, reference count) over the candidate's n-grams."""
    return sum(min(count, reference[gram]) for gram, count in candidate.items()
               if gram in reference)


def safe_ratio(numerator: float, denominator: float) -> float:
    """numerator / denominator, or 0 when the denominator is not positive."""
    return numerator / denominator if denominator > 0 else 0.0


def ieee_div(numerator: float, denominator: float) -> float:
    """Float division with IEEE results for a zero denominator (NaN or ±∞)."""
    if denominator != 0:
        return numerator / denominator
    if numerator == 0 or math.isnan(numerator):
        return math.nan
    return math.copysign(math.inf, numerator) * math.copysign(1.0, denominator)


def f_beta(precision: float, recall: float, beta: float) -> float:
    """(1 + β²)PR / (β²P + R); 0 when P = R = 0."""
    if precision == 0 and recall == 0:
        return 0.0
    beta_squared = beta * beta
    return ieee_div((1 + beta_squared) * precision * recall, beta_squared * precision + recall)


def lcs_length(a: Sequence[str], b: Sequence[str]) -> int:
    """Length of the longest common subsequence of two token lists.

    rapidfuzz's bit-parallel ``LCSseq`` does the work in C; each distinct token is first
    numbered, so tokens compare by equality alone (never by a hash that could collide).
    """
    if not a or not b:
        return 0
    ids: dict[str, int] = {}
    left = [ids.setdefault(token, len(ids)) for token in a]
    right = [ids.setdefault(token, len(ids)) for token in b]
    return int(LCSseq.similarity(left, right))
