"""The custom-script evaluator's output (docs/scoring.md §C5) as dimension scores.

The last stdout line that parses as JSON and has ``scores`` as an object wins (lines are
scanned from the last to the first). An evaluator that did not run leaves its dimensions in
``error`` (the pack's or the fleet's failure: no contest), and so does one that timed out
(issue 19: an evaluator that never exits is the pack's mistake; the seal removes the FIFOs
a candidate could hang it on). One that ran to its end read the candidate's files, so
whatever it then failed to give — it crashed, printed no scores line, or no finite
non-negative number under the key — scores the dimension 0 with the reason: a submission
shaped to break the evaluator (``answer.json`` = ``[]``, a score driven to NaN) must not
turn its loss into no result. So does one whose output was cut at its cap: an evaluator
that echoes an answer before its scores line could be made to print a forged ``scores``
line and then more than the cap, so that the forgery is the last line left. A pack whose
evaluator fails on its own reference cannot pass ``evalfleet check``. A value above the
scale is clamped to full marks, and the reason says so.
"""

from __future__ import annotations

import json
import math
from typing import Any, NamedTuple

NO_SCORES = "Evaluator output did not contain a JSON line with 'scores' key"
#: Why an evaluator whose output was cut at its cap scores 0: the last ``scores`` line left
#: may be the candidate's text, echoed before the cap, and not the evaluator's own.
CUT = ("the evaluator's output passed its cap, so its last scores line could be text it "
       "printed, not its scores")


class ScriptScore(NamedTuple):
    """A 0–1 score, or None with the reason the dimension is in error."""

    score: float | None
    reason: str


def scores_line(stdout: str) -> dict[str, Any] | None:
    """The payload of the last JSON line with a ``scores`` object, or None. Lines end at
    ``\n`` only: ``str.splitlines`` would also end one at ``\r``, ``\x1c`` or ``\u2028``,
    so an evaluator that echoes a candidate's one-line answer could print a forged line."""
    for line in reversed(stdout.split("\n")):
        try:
            payload = json.loads(line)
        except (ValueError, RecursionError):  # nested past Python's stack: not a scores line
            continue
        if isinstance(payload, dict) and isinstance(payload.get("scores"), dict):
            return payload
    return None


def script_score(record: dict[str, Any] | None, key: str, scale: int) -> ScriptScore:
    """The score under ``key`` from a ``grader.evaluator.completed`` payload."""
    if record is None:
        return ScriptScore(None, "the evaluator did not run")
    if record.get("timed_out"):
        return ScriptScore(None, _failure(record))
    if record.get("error"):
        return ScriptScore(None, f"the evaluator could not run: {record['error']}")
    if record.get("truncated"):
        return ScriptScore(0.0, f"scored 0: {CUT}")
    payload = scores_line(str(record.get("stdout") or ""))
    found = (ScriptScore(None, _failure(record)) if payload is None
             else _value(payload["scores"].get(key), key, scale))
    return found if found.score is not None else ScriptScore(0.0, f"scored 0: {found.reason}")


def _failure(record: dict[str, Any]) -> str:
    if record.get("timed_out"):
        return f"Evaluation timed out after {int(record.get('timeout_ms') or 0) // 1000}s"
    stderr = str(record.get("stderr") or "").strip().splitlines()
    tail = f"; stderr: {stderr[-1][:200]}" if stderr else ""
    return f"{NO_SCORES} (exit code {record.get('exit_code')}){tail}"


def _value(raw: Any, key: str, scale: int) -> ScriptScore:
    if raw is None:
        return ScriptScore(None, f'evaluator scores have no "{key}"')
    if isinstance(raw, bool) or not isinstance(raw, int | float) or not math.isfinite(raw):
        return ScriptScore(None, f'evaluator score "{key}" is not a finite number: {raw!r}')
    if raw < 0:
        return ScriptScore(None, f'evaluator score "{key}" is negative: {raw}')
    if raw > scale:
        return ScriptScore(1.0, f'evaluator score "{key}" {raw} clamped to {scale}')
    return ScriptScore(raw / scale, "")
