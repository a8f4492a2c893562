"""Which scoring semantics this evalfleet implements, for results to record.

A stored scorecard is only comparable with one produced under the same semantics. The
version changes whenever evalfleet's answer for the same input changes on purpose (a
verdict, a score, a reason, how a pack is read); ``evalfleet rescore`` re-scores stored
results with today's semantics and lists what moved.

History:

* ``"1"`` — before issue 15 (results without ``provenance`` were scored under it).
* ``"2"`` — every scorecard field as AgentClash's ``runtime/scoring`` at
  :data:`AGENTCLASH_COMMIT` computes it; packs read as yaml.v3 reads them; every input set
  reachable; ROUGE-L via rapidfuzz (same values).
* ``"3"`` — ``"2"`` with evalfleet's verdict-integrity rules where a submission could steer
  AgentClash's answer (2026-11-27): a judge the budget stopped, or whose every call the
  run's evidence derailed (unreadable replies, a request refused as too large or filtered)
  or whose context names run evidence the run left out, scores its dimension 0 rather
  than unavailable; a custom-script evaluator that ran to its end but gave no usable
  score scores its dimension 0 rather than ``error``; the Clawdiators layer's scores stay within 0-1
  (negative counts or times score 0).
* ``"4"`` — ``"3"`` with a submission the sandbox could not hold (``grader.submission.refused``)
  the candidate's loss whatever else its events say; and a directory listing that is not
  whole (its event's ``truncated``, ``dropped`` or ``error``) shows no file absent: its
  ``forbidden_files`` fail, and what it misses is named as missing from that listing
  (issue 38).
* ``"5"`` — ``"4"`` with a starved judge deciding no result (issue 43): a judged dimension
  unavailable because its judge's calls failed on the provider's side withholds the
  scorecard's ``score`` and ``result`` (``withheld_reason``), AgentClash's fields unchanged;
  a judge call that timed out while the judge answered the same prompt without the run's
  evidence (the call's recorded ``control``) is the evidence's, and scores its dimension 0.
"""

from __future__ import annotations

from typing import Final

SEMANTICS_VERSION: Final = "5"
AGENTCLASH_REPOSITORY: Final = "agentclash/agentclash"
AGENTCLASH_COMMIT: Final = "439e20ba98d49ed3f0e49067cfa416267c5b1a61"
"""The reference engine's commit whose ``runtime/scoring`` these semantics follow."""
