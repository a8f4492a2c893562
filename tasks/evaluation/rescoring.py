"""Re-scoring stored results with today's semantics, and what changed (``evalfleet rescore``).

A stored RunResult keeps its run's events, so its scorecard can be computed again without
running anything: no sandbox, no model call (LLM-judge results are read back from the
``grader.judge.*`` events). What moved is reported field by field, in three kinds:

* ``verdict`` — ``passed`` and each validator's ``verdict``;
* ``score`` — ``overall_score``, the 0–1000 ``score`` and each dimension's score;
* ``result`` — ``result``, ``status`` and ``validity``;
* ``text`` — ``overall_reason``, ``validity_reason``, ``warnings`` and each validator's
  and dimension's reason (what a platform shows next to a verdict).

A result is re-scored only when that is faithful: it was scored, and none of its events
were cut to fit the size cap.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from evalfleet.scoring import (
    CaseError,
    Pack,
    Scorecard,
    SpecError,
    evaluate,
    find_case,
    trajectory_verified,
)

from ..messages import RunResult
from ..redis_keys import RESULTS_STREAM, result_key
from .provenance import provenance
from .rating import rerated

Kind = Literal["verdict", "score", "result", "text"]
Status = Literal["changed", "unchanged", "skipped", "unscorable"]
_TOP: tuple[tuple[str, Kind], ...] = (
    ("passed", "verdict"), ("overall_score", "score"), ("score", "score"),
    ("result", "result"), ("status", "result"), ("validity", "result"),
    ("overall_reason", "text"), ("validity_reason", "text"), ("warnings", "text"))


_ABSENT: tuple[Any, Any] = (None, None)


@dataclass(frozen=True)
class Change:
    """One scorecard field whose value moved."""

    field: str
    kind: Kind
    before: Any
    after: Any


@dataclass
class Rescored:
    """The outcome of re-scoring one stored result."""

    run_id: str
    status: Status
    reason: str = ""
    changes: list[Change] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    result: RunResult | None = None
    """The stored result with today's scorecard, provenance and rating (when re-scored)."""


def rescore(stored: RunResult, pack: Pack | None) -> Rescored:
    """Score ``stored``'s events again against ``pack`` and list what changed."""
    skip = _why_not(stored, pack)
    if skip is not None or pack is None:
        return Rescored(stored.run_id, "skipped", skip or "no pack")
    notes = _pack_notes(stored, pack)
    try:
        case = _case(stored, pack)
        card = evaluate(pack.spec, stored.events, [case] if case else [])
    except (SpecError, CaseError) as err:
        return Rescored(stored.run_id, "unscorable", _problem(err), notes=notes)
    before = stored.scorecard
    moved = changes(before, card) if before is not None else []
    resources = stored.resources
    ref = stored.provenance.pack_ref if stored.provenance else None
    after = stored.model_copy(update={
        "scorecard": card, "signature": None,
        "provenance": provenance(pack, ref, resources, stored.run_id),
        "rating": rerated(stored.rating, card, trajectory_verified(stored.events))})
    return Rescored(stored.run_id, "changed" if moved else "unchanged", changes=moved,
                    notes=notes, result=after)


def _why_not(stored: RunResult, pack: Pack | None) -> str | None:
    if stored.outcome != "scored" or stored.scorecard is None:
        return f"not a scored result (outcome {stored.outcome})"
    if stored.dropped:
        return (f"its events were cut to fit the size cap ({', '.join(stored.dropped)}): "
                "scoring them again would not be faithful")
    if pack is None:
        return "no pack to score with: pass --pack, or --packs-dir for a registered pack"
    return None


def _pack_notes(stored: RunResult, pack: Pack) -> list[str]:
    was = stored.provenance.pack_hash if stored.provenance else None
    if was is not None and was != pack.content_hash:
        return [f"the pack differs from the one scored ({was} then, {pack.content_hash} now)"]
    return []


def _case(stored: RunResult, pack: Pack) -> Any:
    if stored.case_key is None:
        return pack.cases[0] if len(pack.cases) == 1 else None
    key = f"{stored.input_set}/{stored.case_key}" if stored.input_set else stored.case_key
    return find_case(pack.cases, key)


def _problem(err: SpecError | CaseError) -> str:
    if isinstance(err, SpecError):
        return "; ".join(str(e) for e in err.errors)
    return f"case: {err}"


def changes(before: Scorecard, after: Scorecard) -> list[Change]:
    """Every compared field whose value differs between two scorecards."""
    found = [Change(name, kind, getattr(before, name), getattr(after, name))
             for name, kind in _TOP if getattr(before, name) != getattr(after, name)]
    found += _keyed("validator_details", _validators(before), _validators(after))
    found += _keyed("dimensions", _dimensions(before), _dimensions(after))
    return found


def _validators(card: Scorecard) -> dict[str, dict[str, tuple[Any, Kind]]]:
    return {d.key: {"verdict": (d.verdict, "verdict"), "normalized_score": (
        d.normalized_score, "score"), "reason": (d.reason, "text")}
        for d in card.validator_details}


def _dimensions(card: Scorecard) -> dict[str, dict[str, tuple[Any, Kind]]]:
    return {key: {"score": (d.score, "score"), "state": (d.state, "result"),
                  "reason": (d.reason, "text")} for key, d in card.dimensions.items()}


def _keyed(name: str, before: dict[str, dict[str, tuple[Any, Kind]]],
           after: dict[str, dict[str, tuple[Any, Kind]]]) -> list[Change]:
    """Changes of each entry's parts; an entry only one side has changes from/to None."""
    out = []
    for key in [*before, *(k for k in after if k not in before)]:
        old, new = before.get(key, {}), after.get(key, {})
        for part in [*old, *(p for p in new if p not in old)]:
            was, was_kind = old.get(part, _ABSENT)
            now, now_kind = new.get(part, _ABSENT)
            if was != now:
                out.append(Change(f"{name}[{key}].{part}", now_kind or was_kind, was, now))
    return out


def stream_results(redis: Any, batch: int = 500,
                   forgotten: Callable[[str], RunResult | None] | None = None,
                   ) -> Iterator[RunResult]:
    """Every result the results stream still names, oldest first, read-only (``XRANGE``:
    no consumer group is created or acknowledged). An entry names its run; the result is
    its key's (``GET``, a batch at a time); one that expired since is asked of
    ``forgotten`` (the archive), else passed over."""
    start = "-"
    while True:
        entries = redis.xrange(RESULTS_STREAM, min=start, max="+", count=batch)
        run_ids = [_text(fields[b"run_id"]) for _, fields in entries]
        bodies = redis.mget([result_key(r) for r in run_ids]) if run_ids else []
        for run_id, body in zip(run_ids, bodies, strict=True):
            found = (RunResult.model_validate_json(body) if body is not None
                     else forgotten(run_id) if forgotten else None)
            if found is not None:
                yield found
        if len(entries) < batch:
            return
        start = "(" + _text(entries[-1][0])


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def summary(outcomes: Iterable[Rescored]) -> dict[str, int]:
    """How many results fell in each status."""
    counts: dict[str, int] = {"changed": 0, "unchanged": 0, "skipped": 0, "unscorable": 0}
    for outcome in outcomes:
        counts[outcome.status] += 1
    return counts
