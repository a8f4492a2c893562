"""Whose fault a failed judge call is: the provider's, or the run's evidence (pure).

A judge call that produced no answer is read back from its event (the worker records the
facts: its ``error``, ``http_status``, ``failure`` kind and, after a timeout, its
``control`` call) and filed on one side:

* **the run's evidence** (``"evidence"``) — something the candidate's text can provoke:
  the provider refused the request as written (HTTP 400, 413, 422: its size or content),
  or the call timed out while the same judge model answered the same prompt *without the
  run's evidence* (the control call) within the call's own timeout: the evidence is what
  kept the model from finishing in time (a reply that asks its judge to write at length).
  Such a judge scores its dimension 0 with the reason, as a judge the budget stopped does.
* **the provider** (``"provider"``) — anything else: no endpoint configured, a refused
  connection or a DNS failure, a timeout with no control answered (none sent, or it timed
  out or failed too), 401/403/404, 429 or 5xx after retries, a body that is not the API's
  envelope, a call the judging deadline left no time for. Such a failure never decides a
  result: the worker retries the judging step within its deadline, and a judge still
  unavailable withholds the scorecard's ``score`` and ``result``
  (:func:`starved_judges`, docs/scoring.md §14).

A timeout alone cannot tell the two apart: a provider's answer comes whole, after the
model has finished, so "no byte before the deadline" is what both a stalled provider and
an answer written at length look like. The control call is what separates them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Literal

Side = Literal["evidence", "provider"]

REFUSED_STATUSES: Final = frozenset({400, 413, 422})
"""What a provider answers a request it will not take as written (its size or content). The
only part of a judge's request a run writes is its evidence."""
TIMEOUT: Final = "timeout"
"""The ``failure`` kind the worker records for a call with no answer within its timeout."""
PROVIDER_FAILED: Final = "provider_failures"
"""The payload key of an unscored judge result: how many calls failed on the provider's side."""


def failure_side(error: str, http_status: int | None, failure: str = "",
                 control: Mapping[str, Any] | None = None) -> Side:
    """The side a failed call (``error`` non-empty) is filed on; see the module docstring."""
    if http_status in REFUSED_STATUSES:
        return "evidence"
    if failure == TIMEOUT and control_answered(control):
        return "evidence"
    return "provider"


def control_answered(control: Mapping[str, Any] | None) -> bool:
    """Whether the control call recorded beside a timed-out call was answered in time."""
    return control is not None and control.get("answered") is True


def evidence_timeout(error: str, control: Mapping[str, Any] | None) -> str:
    """The reason of a timeout the run's evidence provoked: the error and the control."""
    took = (control or {}).get("duration_ms")
    shown = f" in {float(took):.0f} ms" if isinstance(took, int | float) else ""
    return (f"{error}, while the judge answered the same prompt without the run's "
            f"evidence{shown}")


def starved_judges(dimensions: Mapping[str, tuple[str, str | None]],
                   results: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The judges, in dimension order, whose dimension is unavailable because their calls
    failed on the provider's side. ``dimensions``: each llm_judge dimension's state and
    judge key."""
    found: list[str] = []
    for state, judge_key in dimensions.values():
        payload = (results.get(judge_key or "") or {}).get("payload") or {}
        if state == "unavailable" and payload.get(PROVIDER_FAILED) and judge_key not in found:
            found.append(str(judge_key))
    return found
