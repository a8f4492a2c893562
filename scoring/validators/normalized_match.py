"""normalized_match: equality after a normalization pipeline (docs/scoring.md §5.9). Strict config.

``pipeline`` (or its legacy alias ``normalizations``; setting both non-empty is an error)
names the steps of :data:`scoring.compat.textnorm.STEPS`, applied in order to both sides; the
results are compared byte for byte. An empty or absent pipeline means the default
``[trim, lowercase, collapse_whitespace]``. An unknown step is rejected at load time
(``"<step>" is not a supported normalization step`` at ``config.pipeline[i]``) and is an
error result at run time.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from ..compat.textnorm import DEFAULT_PIPELINE, UnknownStep, apply_pipeline, go_quote, unknown_steps
from ..errors import FieldError
from .base import CheckInput, Kind, Outcome
from .graded import GoStrictConfig

MIX_ERROR = "cannot mix pipeline with normalizations"


class NormalizedMatchConfig(GoStrictConfig):
    pipeline: list[str] = Field(default_factory=list)
    normalizations: list[str] = Field(default_factory=list)
    """Legacy alias of ``pipeline``."""


def steps_of(config: NormalizedMatchConfig) -> list[str]:
    """The effective pipeline.

    Raises:
        ValueError: when both ``pipeline`` and ``normalizations`` are non-empty.
    """
    if config.pipeline and config.normalizations:
        raise ValueError(MIX_ERROR)
    return list(config.pipeline or config.normalizations or DEFAULT_PIPELINE)


def check(given: CheckInput) -> Outcome:
    try:
        steps = steps_of(given.config)
    except ValueError as err:
        return Outcome.error(f"parse normalized_match config: {err}")
    normalized = {}
    for side, text in (("actual", given.actual or ""), ("expected", given.expected or "")):
        try:
            normalized[side] = apply_pipeline(text, steps)
        except UnknownStep as err:
            return Outcome.error(f"normalize {side} value: {err}")
    return Outcome.check(normalized["actual"] == normalized["expected"], "",
                         "normalized values do not match", pipeline=steps,
                         normalized_actual=normalized["actual"],
                         normalized_expected=normalized["expected"])


def config_rules(config: Any, path: str) -> list[FieldError]:
    """No mixing of the two keys; every step known (reported at ``pipeline[i]``)."""
    try:
        steps = steps_of(config)
    except ValueError as err:
        return [FieldError(path, str(err))]
    return [FieldError(f"{path}.pipeline[{i}]", f"{go_quote(step)} is not a supported "
                       "normalization step") for i, step in unknown_steps(steps)]


KIND = Kind("normalized_match", check, NormalizedMatchConfig, "strict", config_rules=config_rules,
            go_struct="normalizedMatchConfig")
