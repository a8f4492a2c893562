"""Verifying a published result: its signature, then its scorecard against its evidence.

``evalfleet verify`` asks two questions of a result, in this order, and answers with the
first thing that is wrong (one :data:`Verdict` each, and its own exit code):

1. Is it signed (``unsigned``), by a key the verifier trusts (``unknown_key``), and is it
   what was signed? A result whose ``scorecard`` no longer matches the signature and
   whose evidence scores to another scorecard had its scorecard swapped
   (``scorecard_mismatch``); any other change is ``tampered``, naming the members that
   changed (``signature.fields``).
2. For a scored result: do its recorded events, scored again with the recorded pack
   version (no sandbox, no model call), give the same scorecard? A result whose events
   were cut for size cannot be re-scored faithfully (``evidence_cut``); one that scores
   otherwise is ``scorecard_mismatch``.

A result with no scorecard (rejected, cancelled, expired, a fleet failure) is verified by
its signature alone.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from pydantic import ValidationError

from evalfleet.scoring import SEMANTICS_VERSION, Pack

from ..messages import RunResult
from ..signatures import Checked, check
from .rescoring import Change, rescore

Verdict = Literal["verified", "unsigned", "unknown_key", "tampered", "scorecard_mismatch",
                  "evidence_cut", "malformed"]
PackFor = Callable[[RunResult], Pack]
"""The pack a result was scored with (raises :class:`PackUnavailable` when there is none)."""


class PackUnavailable(Exception):
    """No pack to re-score a result with, or not the one it was scored with."""


@dataclass
class Verification:
    """What verifying one result found: the verdict and the lines that explain it."""

    verdict: Verdict
    run_id: str = ""
    key_id: str = ""
    lines: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    """Members (``tampered``) or scorecard fields (``scorecard_mismatch``) that differ."""


def verify(body: str | bytes, trusted: Mapping[str, Ed25519PublicKey],
           pack_for: PackFor) -> Verification:
    """Verify one published result (its text as published).

    Raises:
        PackUnavailable: a scored result and no pack to re-score it with.
    """
    checked = check(body, trusted)
    if checked.verdict in ("malformed", "unsigned", "unknown_key"):
        return Verification(checked.verdict, _run_id(body), checked.key_id, [checked.reason])
    try:
        result = RunResult.model_validate_json(body)
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        return Verification("malformed", _run_id(body), lines=[f"{where}: {first['msg']}"])
    return _judged(result, checked, pack_for)


def _judged(result: RunResult, checked: Checked, pack_for: PackFor) -> Verification:
    """The verdict once the signature's key is known and the result reads."""
    tampered = checked.verdict == "tampered"
    if result.outcome != "scored" or result.scorecard is None:
        return _signature_only(result, checked)
    if result.dropped and not tampered:
        return Verification("evidence_cut", result.run_id, checked.key_id, [
            f"signed, but its evidence was cut for size ({', '.join(result.dropped)}): "
            "its scorecard cannot be scored again"])
    if result.dropped:
        return _tampered(result, checked, [])
    moved, notes = _rescored(result, pack_for)
    if moved and (not tampered or "scorecard" in checked.changed):
        said = "the signature does not match either" if tampered else "the signature holds"
        return Verification("scorecard_mismatch", result.run_id, checked.key_id, [
            f"its evidence scores to another scorecard ({said})", *notes,
            *(f"{c.field}: {c.before!r} recorded, {c.after!r} from the evidence"
              for c in moved)], [c.field for c in moved])
    if tampered:
        return _tampered(result, checked, notes)
    return Verification("verified", result.run_id, checked.key_id, [
        f"signed by {checked.key_id}; its evidence scores to the same scorecard", *notes])


def _signature_only(result: RunResult, checked: Checked) -> Verification:
    if checked.verdict == "tampered":
        return _tampered(result, checked, [])
    return Verification("verified", result.run_id, checked.key_id, [
        f"signed by {checked.key_id} (outcome {result.outcome}: no scorecard to score again)"])


def _tampered(result: RunResult, checked: Checked, notes: list[str]) -> Verification:
    what = (f"changed: {', '.join(checked.changed)}" if checked.changed
            else "the signature itself was changed")
    return Verification("tampered", result.run_id, checked.key_id,
                        [f"not what {checked.key_id} signed: {what}", *notes],
                        list(checked.changed))


def _rescored(result: RunResult, pack_for: PackFor) -> tuple[list[Change], list[str]]:
    """The scorecard fields that re-scoring moves, and notes on how it was re-scored.

    Raises:
        PackUnavailable: no pack, or the pack is not the recorded one.
    """
    pack = pack_for(result)
    recorded = result.provenance.pack_hash if result.provenance else None
    if recorded is not None and recorded != pack.content_hash:
        raise PackUnavailable(f"the pack given is not the one run {result.run_id} was scored "
                              f"with ({recorded} recorded, {pack.content_hash} given)")
    outcome = rescore(result, pack)
    if outcome.status in ("skipped", "unscorable"):
        raise PackUnavailable(f"run {result.run_id} cannot be scored again: {outcome.reason}")
    return outcome.changes, _semantics_note(result)


def _semantics_note(result: RunResult) -> list[str]:
    was = result.provenance.scoring_semantics if result.provenance else None
    if was is None or was == SEMANTICS_VERSION:
        return []
    return [f"scored under semantics {was}; re-scored under {SEMANTICS_VERSION}"]


def _run_id(body: str | bytes) -> str:
    """The run id of a body that may not parse (best effort, for the report)."""
    try:
        found: Any = json.loads(body)
    except ValueError:
        return ""
    return str(found.get("run_id", "")) if isinstance(found, dict) else ""
