"""Run evalfleet on a conformance request and shape its output as the golden's.

A request is what the reference harness took: a pack (``pack_yaml``) or a spec
(``spec_json``), the run's ``events``, the case to score (``case``: ``<set>/<key>``, or
``challenge_inputs`` given directly), and optionally ``human_preference`` and
``llm_judge_results`` (AgentClash's aggregated judge results). The output is
``{"document": ...}``, ``{"load_error": ...}`` or ``{"eval_error": ...}``; the document
holds the fields of AgentClash's ``RunAgentEvaluation`` that a scorecard persists, with
Go's omissions (an empty reason, a nil score, an empty list are left out).
"""

from __future__ import annotations

import json
import math
from typing import Any

from evalfleet.scoring import Case, Scorecard, SpecError, evaluate, load_pack

VALIDATOR_FIELDS = ("key", "type", "verdict", "state", "outcome_class", "reason",
                    "normalized_score", "source")
METRIC_FIELDS = ("key", "collector", "state", "reason", "numeric_value", "text_value",
                 "boolean_value")
EMPTY: tuple[Any, ...] = (None, "", [], {})


def run(request: dict[str, Any]) -> dict[str, Any]:
    """evalfleet's answer to one request, shaped as the reference harness shapes Go's."""
    source = request.get("pack_yaml")
    try:
        pack = load_pack(source if source is not None else request["spec_json"])
    except SpecError as err:
        return {"load_error": str(err)}
    try:
        card = evaluate(pack.spec, request.get("events") or [], _cases(request, pack.cases),
                        human_preference=_preference(request.get("human_preference")),
                        judge_results=_judged(request.get("llm_judge_results")))
    except SpecError as err:
        return {"eval_error": f"{type(err).__name__}: {err}"}
    return {"document": document(card)}


def _cases(request: dict[str, Any], cases: list[Case]) -> list[Any]:
    if request.get("challenge_inputs") is not None:
        return list(request["challenge_inputs"])
    if request.get("case"):
        return [c for c in cases if c.qualified_key == request["case"]]
    return list(cases)


def _judged(results: list[dict[str, Any]] | None) -> dict[str, Any] | None:
    """AgentClash's ``[]LLMJudgeResult`` as evalfleet's judge results by key (None: read
    them from the run's judge events)."""
    return None if results is None else {r["judge_key"]: r for r in results}


def _preference(value: Any) -> Any:
    if isinstance(value, str):  # the harness's spelling of non-finite numbers
        return {"NaN": math.nan, "+Inf": math.inf, "-Inf": -math.inf}[value]
    return value


def document(card: Scorecard) -> dict[str, Any]:
    """The scorecard's AgentClash fields, as the harness writes Go's evaluation."""
    data = json.loads(card.to_json())
    details = [_kept({k: d.get(k) for k in VALIDATOR_FIELDS}) for d in data["validator_details"]]
    for detail in details:
        detail.setdefault("verdict", "")  # Go always writes the verdict, even ""
    doc = {
        "status": data["status"], "strategy": data["strategy"],
        "overall_score": data["overall_score"], "passed": data["passed"],
        "overall_reason": data["overall_reason"], "validity": data["validity"],
        "validity_reason": data["validity_reason"], "warnings": data["warnings"],
        "dimensions": {k: _kept(v) for k, v in data["dimensions"].items()},
        "validator_summary": data["validator_summary"], "validator_details": details,
        "metric_summary": data["metric_summary"],
        "metric_details": [_kept({k: m.get(k) for k in METRIC_FIELDS})
                           for m in data["metric_details"]],
    }
    return {k: v for k, v in doc.items() if v not in (None, "", [])}


def _kept(entry: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in entry.items() if v not in EMPTY}
