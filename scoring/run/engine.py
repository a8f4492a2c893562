"""``evaluate``: a spec, a run's events and its case in; a scorecard out. Pure.

The order of work is AgentClash's (docs/scoring.md §1): evidence, validators, metrics,
dimensions, the strategy's verdict, then status, validity and warnings (§13). The
registered layers (:mod:`scoring.layers`: the Clawdiators layer) read the events beside the
evidence and adjust the dimensions before the verdict.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal, Protocol

from .. import layers
from ..compat.goquote import quote
from ..compat.textform import first_non_empty
from ..errors import SpecError
from ..judges.faults import starved_judges
from ..judges.rebuild import JudgeOutcome, judge_results
from ..record.events import Event, order_events
from ..record.evidence import Evidence, extract_evidence
from ..spec.models import EvaluationSpec
from ..spec.rules import validate_spec
from ..validators import fuzzy_match, math_equivalence
from . import scorecard as card
from .collectors import collect_metric
from .dimensions import score_dimension
from .inputs import run_inputs
from .records import DimensionResult, MetricResult, ValidatorResult
from .source import Inputs
from .strategies import Verdict, decide, is_available, weights
from .validator_run import run_validator

WARNED_SOURCES = frozenset({"latency", "cost", "behavioral", "metric", "llm_judge"})
JudgeResults = Mapping[str, Mapping[str, Any]]
Status = Literal["complete", "partial"]
Validity = Literal["valid", "degraded", "invalid"]


class _Stated(Protocol):
    @property
    def key(self) -> str: ...
    @property
    def state(self) -> str: ...
    @property
    def reason(self) -> str: ...


def evaluate(spec: EvaluationSpec, events: Iterable[Any], cases: Iterable[Any] | None = None,
             *, human_preference: float | None = None,
             judge_results: JudgeResults | None = None) -> card.Scorecard:
    """Score one run.

    Args:
        spec: a loaded (validated) spec, see :func:`scoring.load_spec`.
        events: AgentClash events ``{type, sequence_number?, occurred_at, payload}``.
        cases: the case(s) of the run in AgentClash pack form; score per case.
        human_preference: an externally supplied 0–1 score for ``human_preference``.
        judge_results: aggregated LLM-judge results keyed by judge key; when None, the
            results are rebuilt from the run's ``grader.judge.*`` events (no model called).

    Raises:
        SpecError: the spec is invalid (AgentClash validates it again here too).
        InputError: an event or case does not decode, or ``human_preference`` is not a
            number in [0, 1]; every problem is listed with its field path.
    """
    findings = validate_spec(spec)
    if findings:
        raise SpecError(findings)
    decoded, case_list = run_inputs(events, cases, human_preference)
    evidence = extract_evidence(decoded, case_list)
    judged = _judged(spec, evidence, decoded, judge_results)
    readings = {layer.name: layer.read(decoded) for layer in layers.registered()}
    validators = [run_validator(v, spec, evidence) for v in spec.validators]
    metrics = [collect_metric(m, spec, evidence, validators, readings) for m in spec.metrics]
    given = Inputs(spec, evidence, validators, metrics, judged.results, human_preference,
                   readings)
    scored = _adjusted(spec, evidence, readings, [score_dimension(d, given)
                                                  for d in spec.scorecard.dimensions])
    dimensions = scored.dimensions
    verdict = decide(spec, dimensions)
    warnings = _warnings(spec, evidence.warnings, dimensions) + judged.warnings
    document = _document(spec, verdict, validators, metrics, dimensions, warnings,
                         judged.results)
    return _with_additions(_refused(document, evidence.refused), scored.additions)


def _refused(document: card.Scorecard, why: str | None) -> card.Scorecard:
    """The scorecard of a run whose submission the sandbox could not hold (``why``): the
    candidate's loss, whatever else the evidence says (docs/scoring.md §18)."""
    if why is None:
        return document
    return document.model_copy(update={"passed": False, "overall_reason": why, "score": 0,
                                       "result": "loss", "withheld_reason": None})


def _adjusted(spec: EvaluationSpec, evidence: Evidence, readings: Mapping[str, object],
              dimensions: list[DimensionResult]) -> layers.Adjusted:
    """Each registered layer's adjustment in turn; their scorecard fields together."""
    found = layers.Additions()
    for layer in layers.registered():
        adjusted = layer.adjust(spec, evidence, readings[layer.name], dimensions)
        dimensions, more = adjusted.dimensions, adjusted.additions
        found = layers.Additions(
            found.submission_warnings + more.submission_warnings,
            found.constraint_violations + more.constraint_violations,
            more.harness_warning if more.harness_warning is not None else found.harness_warning)
    return layers.Adjusted(dimensions, found)


def _with_additions(document: card.Scorecard, additions: layers.Additions) -> card.Scorecard:
    """The layers' scorecard fields (empty for a spec that uses none)."""
    document.submission_warnings = additions.submission_warnings
    document.constraint_violations = additions.constraint_violations
    document.harness_warning = additions.harness_warning
    return document


def _judged(spec: EvaluationSpec, evidence: Evidence, events: list[Event],
            supplied: JudgeResults | None) -> JudgeOutcome:
    """Supplied judge results as given; else rebuilt from the recorded judge calls (§14)."""
    if supplied is not None or not spec.llm_judges:
        return JudgeOutcome({k: dict(v) for k, v in (supplied or {}).items()}, [])
    return judge_results(spec, evidence, order_events(events))


def status(dimensions: list[DimensionResult]) -> Status:
    """``complete`` unless a dimension is missing a score, else ``partial``."""
    if not dimensions or not any(is_available(d) for d in dimensions):
        return "partial"
    return "complete" if all(is_available(d) for d in dimensions) else "partial"


def validity(validators: list[ValidatorResult], metrics: list[MetricResult],
             dimensions: list[DimensionResult]) -> tuple[Validity, str]:
    """``invalid`` on any error, ``degraded`` on anything unavailable, else ``valid``.

    AgentClash's ``computeEvaluationValidity`` (``evaluation_validity.go``): errors are
    looked for in validators, metrics, then dimensions; unavailability in dimensions,
    validators, then metrics; an empty reason is replaced by a generic one.
    """
    named: list[tuple[str, Sequence[_Stated]]] = [
        ("validator", validators), ("metric", metrics), ("dimension", dimensions)]
    for label, results in named:
        for r in results:
            if r.state == "error":
                why = first_non_empty(r.reason, f"{label} error")
                return "invalid", f"{label} {quote(r.key)} errored: {why}"
    missing = {"validator": "missing validator evidence", "metric": "missing metric evidence",
               "dimension": "missing scoring evidence"}
    for label, results in [named[2], named[0], named[1]]:
        for r in results:
            if r.state == "unavailable":
                why = first_non_empty(r.reason, missing[label])
                return "degraded", f"{label} {quote(r.key)} unavailable: {why}"
    return "valid", ""


#: How a validator's error reason starts when the candidate's own answer could not be read
#: as what the pack asked for (not JSON, not a boolean, not a math expression; a
#: postcondition's target, the candidate's file or output, not JSON for ``equals``).
ANSWER_ERRORS = ("parse actual ", "normalize actual ", "parse postcondition target as JSON")


def answer_made_invalid(validators: list[ValidatorResult], metrics: list[MetricResult],
                        dimensions: list[DimensionResult]) -> bool:
    """Whether every error of an ``invalid`` run is a validator's on the candidate's answer.

    Such a run is the candidate's doing (garbage in place of JSON), not the pack's or ours,
    so it is a loss rather than no contest (:func:`scorecard.result_for`). A metric error,
    or a dimension error not caused by one of those validators, keeps it no contest.
    """
    errored = [v for v in validators if v.state == "error"]
    if not errored or any(m.state == "error" for m in metrics):
        return False
    if not all(_answer_at_fault(v) for v in errored):
        return False
    caused = tuple(f"validator {quote(v.key)} errored: " for v in errored)
    return all(d.reason.startswith(caused) for d in dimensions if d.state == "error")


def _answer_at_fault(result: ValidatorResult) -> bool:
    """Whether a validator's error is the candidate's answer's: it could not be read, or
    it alone passed a limit of the check (AgentClash's reasons name no side: the pack's
    expected value is within the limit, so the answer is what passed it)."""
    if result.reason.startswith(ANSWER_ERRORS):
        return True
    if result.type == "fuzzy_match" and result.reason.startswith(FUZZY_TOO_LARGE):
        return len(result.expected_value or "") <= fuzzy_match.MAX_CODE_POINTS
    if result.type == "math_equivalence" and MATH_TOO_DEEP in result.reason:
        return math_equivalence.nests_within_limits(result.expected_value or "")
    return False


#: AgentClash's reasons for an answer past a check's limits (either side's, as worded).
FUZZY_TOO_LARGE = "fuzzy_match input too large"
MATH_TOO_DEEP = "expression is too deeply nested"


def _warnings(spec: EvaluationSpec, evidence_warnings: list[str],
              dimensions: list[DimensionResult]) -> list[str]:
    sources = {d.key: d.source for d in spec.scorecard.dimensions}
    reasons = [d.reason for d in dimensions
               if d.state == "unavailable" and sources.get(d.key) in WARNED_SOURCES]
    return sorted({w for w in [*evidence_warnings, *reasons] if w})  # uniqueStrings


def _breakdown(spec: EvaluationSpec, dimensions: list[DimensionResult]
               ) -> dict[str, card.BreakdownEntry]:
    pairs = [(d, r) for d, r in zip(spec.scorecard.dimensions, dimensions, strict=True)
             if is_available(r)]
    entries: dict[str, card.BreakdownEntry] = {}
    for weight, (decl, result) in zip(weights(pairs), pairs, strict=True):
        points = card.to_points(result.score or 0.0)
        entries[decl.key] = card.BreakdownEntry(score=points, weight=weight,
                                                weighted=points * weight)
    return entries


def _document(spec: EvaluationSpec, verdict: Verdict, validators: list[ValidatorResult],
              metrics: list[MetricResult], dimensions: list[DimensionResult],
              warnings: list[str], judge_results: JudgeResults | None) -> card.Scorecard:
    valid, valid_reason = validity(validators, metrics, dimensions)
    points = None if verdict.overall is None else card.to_points(verdict.overall)
    forfeit = valid == "invalid" and answer_made_invalid(validators, metrics, dimensions)
    withheld = None if forfeit else withheld_reason(spec, dimensions, judge_results or {})
    if withheld is not None:
        points = None
    return card.Scorecard(
        status=status(dimensions), strategy=spec.scorecard.strategy,
        overall_score=verdict.overall, passed=verdict.passed, overall_reason=verdict.reason,
        validity=valid, validity_reason=valid_reason, warnings=warnings,
        dimensions={d.key: card.dimension_entry(d) for d in dimensions},
        validator_summary=card.validator_summary(validators),
        validator_details=[card.validator_detail(v) for v in validators],
        metric_summary=card.metric_summary(metrics),
        metric_details=[card.metric_detail(m) for m in metrics],
        llm_judge_details=[_judge_detail(spec, k, v) for k, v in (judge_results or {}).items()],
        score=0 if forfeit else points, result=card.result_for(points, valid, forfeit),
        score_breakdown=_breakdown(spec, dimensions), withheld_reason=withheld,
    )


def withheld_reason(spec: EvaluationSpec, dimensions: list[DimensionResult],
                    judge_results: JudgeResults) -> str | None:
    """Why ``score`` and ``result`` are withheld, or None: a judged dimension is unavailable
    because its judge's calls failed on the provider's side (evalfleet's rule, §14: a
    starved judge never decides a result; AgentClash's fields stay as its engine gives them)."""
    judged = {d.key: (r.state, d.judge_key) for d, r in
              zip(spec.scorecard.dimensions, dimensions, strict=True) if d.source == "llm_judge"}
    starved = starved_judges(judged, judge_results)
    if not starved:
        return None
    names = ("judge " if len(starved) == 1 else "judges ") + ", ".join(map(quote, starved))
    return (f"no result: {names} got no answer from the provider (every call failed on its "
            "side); a dimension left unavailable that way decides nothing")


def _judge_detail(spec: EvaluationSpec, key: str, result: Mapping[str, Any]) -> dict[str, Any]:
    """One ``llm_judge_details`` entry; ``mode`` comes from the declaration unless given."""
    mode = next((j.mode for j in spec.llm_judges if j.key == key), "")
    return {"judge_key": key, "mode": mode, **dict(result)}
