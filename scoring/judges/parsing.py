"""Reading a judge model's answer (docs/scoring.md §14).

The raw text is sanitized first: a markdown fence is stripped; text that is still not one
JSON value is narrowed to the span from the first ``{`` to the last ``}`` (when that span
is valid JSON). The JSON is then read the way Go's ``json.Unmarshal`` reads it into a
struct: an object (or ``null``), fields matched by name (case-insensitively as a fallback),
missing fields taking their zero value, a wrongly typed field an error.
"""

from __future__ import annotations

import json
import math
from typing import Any, NamedTuple

from ..spec.models import JudgeDecl, ScoreScale

DEFAULT_SCALE = ScoreScale(min=1.0, max=5.0)
CONFIDENCES = ("high", "medium", "low")
PASS_WORDS = ("pass", "true", "yes")
FAIL_WORDS = ("fail", "false", "no")


class JudgeParseError(ValueError):
    """The answer cannot be read as the mode's response (a failed sample, not a crash)."""


class Parsed(NamedTuple):
    """One sample's 0–1 score and the confidence the model stated (``""`` if none)."""

    score: float
    confidence: str


def sanitize(raw: str) -> str:
    """The JSON text inside a judge answer (fences stripped, else first ``{``..last ``}``)."""
    text = raw.strip()
    if text.startswith("```"):
        for prefix in ("```json", "```JSON", "```"):
            if text.startswith(prefix):
                text = text[len(prefix):]
                break
        text = text[:text.rfind("```")] if "```" in text else text
        text = text.strip()
    if _valid(text):
        return text
    start, end = text.find("{"), text.rfind("}")
    if start >= 0 and end > start and _valid(text[start:end + 1].strip()):
        return text[start:end + 1].strip()
    return text


def _valid(text: str) -> bool:
    try:
        _loads(text)
    except ValueError:
        return False
    return True


def _loads(text: str) -> Any:
    """Go's ``json.Unmarshal`` as far as a judge's answer needs it (a reply nested past
    Python's stack is an error, as one past Go's depth limit is there)."""
    try:
        return json.loads(text, parse_constant=_no_constant)
    except RecursionError:
        raise ValueError("exceeded max depth") from None


def _no_constant(name: str) -> Any:
    raise ValueError(f"invalid character {name[0]!r} looking for beginning of value")


def _object(raw: str, what: str) -> dict[str, Any]:
    try:
        value = _loads(sanitize(raw))
    except ValueError as err:
        raise JudgeParseError(f"parse {what} judge response: {err}") from None
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise JudgeParseError(f"parse {what} judge response: json: cannot unmarshal "
                              f"{_json_kind(value)} into Go value of type struct")
    return value


def _json_kind(value: Any) -> str:
    kinds = ((bool, "bool"), (int | float, "number"), (str, "string"), (list, "array"))
    return next((name for kind, name in kinds if isinstance(value, kind)), "object")


def _field(obj: dict[str, Any], name: str, kind: Any, what: str) -> Any:
    """The field ``name`` (exact, else case-insensitive) checked against ``kind``."""
    key = name if name in obj else next((k for k in obj if k.lower() == name), None)
    value = obj.get(key) if key is not None else None
    if value is None:
        return None
    if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
        raise JudgeParseError(f"parse {what} judge response: json: cannot unmarshal "
                              f"{_json_kind(value)} into Go struct field .{name}")
    return value


def confidence_of(obj: dict[str, Any], what: str) -> str:
    """The stated confidence, lower-cased, when it is high/medium/low; else ``""``."""
    stated = (_field(obj, "confidence", str, what) or "").strip().lower()
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
    obj = _object(raw, "assertion")
    passed = bool(_field(obj, "pass", bool, "assertion"))
    verdict = (_field(obj, "verdict", str, "assertion") or "").strip().lower()
    passed = True if verdict in PASS_WORDS else False if verdict in FAIL_WORDS else passed
    if judge.expect is False:
        passed = not passed
    return Parsed(1.0 if passed else 0.0, confidence_of(obj, "assertion"))


def _scaled(judge: JudgeDecl, raw: str) -> Parsed:
    obj = _object(raw, "rubric")
    score = float(_field(obj, "score", int | float, "rubric") or 0.0)
    if not math.isfinite(score):
        raise JudgeParseError("judge score is not finite")
    scale = judge.score_scale or DEFAULT_SCALE
    clamped = min(max(score, scale.min), scale.max)
    return Parsed((clamped - scale.min) / (scale.max - scale.min), confidence_of(obj, "rubric"))


def parse_ranking(raw: str, candidates: list[str], current: str) -> Parsed:
    """One n_wise sample: the current candidate's Borda score in the model's ranking.

    Raises:
        JudgeParseError: no ranking, an unknown or repeated id, a candidate left out.
    """
    obj = _object(raw, "n_wise")
    ranking = _ids(obj, "ranking") or _ids(obj, "ranked_ids")
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
    return Parsed(score, confidence_of(obj, "n_wise"))


def _ids(obj: dict[str, Any], name: str) -> list[Any]:
    ids = _field(obj, name, list, "n_wise") or []
    if any(not isinstance(i, str) for i in ids):
        raise JudgeParseError(f"parse n_wise judge response: json: cannot unmarshal "
                              f"non-string into Go struct field .{name} of type string")
    return ids


def _checked(ranking: list[str], valid: set[str]) -> list[str]:
    ranked: list[str] = []
    for candidate in (r.strip() for r in ranking):
        if not candidate:
            continue
        if candidate not in valid:
            raise JudgeParseError(f'n_wise judge returned unknown candidate id "{candidate}"')
        if candidate in ranked:
            raise JudgeParseError(f'n_wise judge returned duplicate candidate id "{candidate}"')
        ranked.append(candidate)
    return ranked
