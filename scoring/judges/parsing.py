"""Reading a judge model's answer (docs/scoring.md §14).

The raw text is sanitized first: a markdown fence is stripped; text that is still not one
JSON value is narrowed to the span from the first ``{`` to the last ``}`` (when that span
is valid JSON). The JSON is then read the way Go's ``json.Unmarshal`` reads it into the
mode's struct (:mod:`scoring.compat.gostruct`): Go's error texts, keys matched exactly or
case-insensitively with the last one winning, ``null`` leaving a field alone, the first
type error in document order.
"""

from __future__ import annotations

import math
from typing import Any, Final, NamedTuple

from ..compat.gojson import UnmarshalError
from ..compat.gojsonscan import valid
from ..compat.gostruct import Field, Struct, unmarshal_struct
from ..compat.textnorm import trim
from ..spec.models import JudgeDecl, ScoreScale

DEFAULT_SCALE = ScoreScale(min=1.0, max=5.0)
CONFIDENCES = ("high", "medium", "low")
PASS_WORDS = ("pass", "true", "yes")
FAIL_WORDS = ("fail", "false", "no")
FENCES: Final = ("```json", "```JSON", "```")
_CONFIDENCE: Final = Field("Confidence", "confidence", "string")
ASSERTION: Final = Struct((Field("Pass", "pass", "bool"), Field("Verdict", "verdict", "string"),
                           _CONFIDENCE))
SCORE: Final = Struct((Field("Score", "score", "float64"), _CONFIDENCE))
RANKING: Final = Struct((Field("Ranking", "ranking", "[]string"),
                         Field("RankedIDs", "ranked_ids", "[]string"), _CONFIDENCE))
"""The structs AgentClash's ``parseJudgeScore`` and ``parseNWiseScore`` read replies into."""


class JudgeParseError(ValueError):
    """The answer cannot be read as the mode's response (a failed sample, not a crash)."""


class Parsed(NamedTuple):
    """One sample's 0–1 score and the confidence the model stated (``""`` if none)."""

    score: float
    confidence: str


def sanitize(raw: str) -> str:
    """The JSON text inside a judge answer (fences stripped, else first ``{``..last ``}``)."""
    text = trim(raw)
    if text.startswith("```"):
        for fence in FENCES:  # Go trims each prefix in turn
            text = text.removeprefix(fence)
        text = text[:text.rfind("```")] if "```" in text else text
        text = trim(text)
    if valid(text):
        return text
    start, end = text.find("{"), text.rfind("}")
    if start >= 0 and end > start and valid(trim(text[start:end + 1])):
        return trim(text[start:end + 1])
    return text


def _read(raw: str, struct: Struct, what: str) -> dict[str, Any]:
    try:
        return unmarshal_struct(sanitize(raw), struct)
    except UnmarshalError as err:
        raise JudgeParseError(f"parse {what} judge response: {err}") from None


def confidence_of(decoded: dict[str, Any]) -> str:
    """The stated confidence, lower-cased, when it is high/medium/low; else ``""``."""
    stated = trim(decoded["confidence"]).lower()
    return stated if stated in CONFIDENCES else ""


def parse_score(judge: JudgeDecl, raw: str) -> Parsed:
    """One rubric/reference/assertion sample's score.

    Raises:
        JudgeParseError: the answer is not the mode's JSON, or its score is not finite.
    """
    if judge.mode == "assertion":
        return _assertion(judge, raw)
    if judge.mode in ("rubric", "reference"):
        return _scaled(judge, raw)
    raise JudgeParseError(f'unsupported judge mode "{judge.mode}"')


def _assertion(judge: JudgeDecl, raw: str) -> Parsed:
    decoded = _read(raw, ASSERTION, "assertion")
    verdict = trim(decoded["verdict"]).lower()
    passed = verdict in PASS_WORDS or (verdict not in FAIL_WORDS and decoded["pass"])
    if judge.expect is False:
        passed = not passed
    return Parsed(1.0 if passed else 0.0, confidence_of(decoded))


def _scaled(judge: JudgeDecl, raw: str) -> Parsed:
    decoded = _read(raw, SCORE, "rubric")
    score = decoded["score"]
    if not math.isfinite(score):
        raise JudgeParseError("judge score is not finite")
    scale = judge.score_scale or DEFAULT_SCALE
    clamped = min(max(score, scale.min), scale.max)
    return Parsed((clamped - scale.min) / (scale.max - scale.min), confidence_of(decoded))


def parse_ranking(raw: str, candidates: list[str], current: str) -> Parsed:
    """One n_wise sample: the current candidate's Borda score in the model's ranking.

    Raises:
        JudgeParseError: no ranking, an unknown or repeated id, a candidate left out.
    """
    decoded = _read(raw, RANKING, "n_wise")
    ranking = decoded["ranking"] or decoded["ranked_ids"]
    if not ranking:
        raise JudgeParseError("n_wise judge response did not include a ranking array")
    ranked = _checked(ranking, set(candidates))
    if len(ranked) != len(candidates):
        raise JudgeParseError(f"n_wise judge ranked {len(ranked)} candidates, "
                              f"want {len(candidates)}")
    if current not in ranked:
        raise JudgeParseError(f"n_wise judge omitted current run agent {current}")
    position, last = ranked.index(current), len(ranked) - 1
    score = 1.0 if last == 0 else (last - position) / last
    return Parsed(score, confidence_of(decoded))


def _checked(ranking: list[str], known: set[str]) -> list[str]:
    ranked: list[str] = []
    for candidate in (trim(r) for r in ranking):
        if not candidate:
            continue
        if candidate not in known:
            raise JudgeParseError(f'n_wise judge returned unknown candidate id "{candidate}"')
        if candidate in ranked:
            raise JudgeParseError(f'n_wise judge returned duplicate candidate id "{candidate}"')
        ranked.append(candidate)
    return ranked
