"""Shared pieces of the text validators' configs and graded decisions (docs/scoring.md §2.1, §5).

* :class:`GoStrictConfig` — a strict config decoded the way Go's ``encoding/json`` decodes
  into a struct with ``DisallowUnknownFields``: unknown keys are errors, a JSON ``null``
  leaves the field at its default, and a key matching a field name case-insensitively
  sets that field.
* threshold helpers: load-time ``must be between 0 and 1`` and the run-time clamp to [0, 1].
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from pydantic import model_validator

from ..compat.generation import InvalidReferences, parse_references
from ..compat.textnorm import prepare
from ..errors import FieldError
from .base import CheckInput, Outcome, StrictConfig


class GoStrictConfig(StrictConfig):
    """Strict config with Go's null and case-insensitive key handling."""

    @model_validator(mode="before")
    @classmethod
    def _go_decode(cls, raw: Any) -> Any:
        if not isinstance(raw, dict):
            return raw
        fields = {name.casefold(): name for name in cls.model_fields}
        decoded: dict[str, Any] = {}
        for key, value in raw.items():
            key = str(key)
            name = key if key in cls.model_fields else fields.get(key.casefold(), key)
            if value is not None:
                decoded[name] = value
        return decoded


def clamp_threshold(threshold: float | None, default: float) -> float:
    """The effective threshold: the default when unset, else clamped to [0, 1]."""
    if threshold is None:
        return default
    return min(max(threshold, 0.0), 1.0)


def threshold_errors(threshold: float | None, path: str) -> list[FieldError]:
    """Load-time rule: a configured threshold must lie in [0, 1]."""
    if threshold is not None and (threshold < 0 or threshold > 1):
        return [FieldError(f"{path}.threshold", "must be between 0 and 1")]
    return []


def positive_errors(value: float | None, path: str) -> list[FieldError]:
    """Load-time rule for ``max_ngram``, ``char_order``, ``beta``: must be > 0 when set."""
    if value is not None and value <= 0:
        return [FieldError(path, "must be greater than 0")]
    return []


def graded_reason(score: float, threshold: float) -> str:
    """AgentClash's fail reason for a graded score below its threshold."""
    if score >= threshold:
        return ""
    return f"score {score:.4f} is below threshold {threshold:.4f}"


def graded_outcome(score: float, threshold: float, reason: str | None = None,
                   **evidence: Any) -> Outcome:
    """A graded outcome whose evidence also records ``score`` and ``threshold``."""
    if reason is None:
        reason = graded_reason(score, threshold)
    outcome = Outcome.graded(score, threshold, reason if score < threshold else "")
    return replace(outcome, evidence={**evidence, "score": score, "threshold": threshold})


def prepared_texts(given: CheckInput, kind: str) -> tuple[str, list[str]] | Outcome:
    """The prepared candidate and references of a generation validator (BLEU/ROUGE/chrF),
    or the pack error when the expected references do not parse."""
    config = given.config
    prep = {"normalize": config.normalize, "case_insensitive": config.case_insensitive}
    try:
        references = parse_references(given.expected or "", **prep)
    except InvalidReferences as err:
        return Outcome.error(f"parse {kind} references: {err}",
                             expected_raw=given.expected)
    return prepare(given.actual or "", **prep), references
