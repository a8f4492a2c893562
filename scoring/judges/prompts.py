"""The judge's evaluation context and the one user message each call sends (docs/scoring.md §14).

Context entries are ``"<ref>:\\n<value>"`` per ``context_from`` reference; reference mode
appends ``"reference_answer:\\n<value>"``; a judge's ``anti_gaming_clauses`` close the
message under their heading. Any unavailable reference makes the judge unavailable with that
reason; a malformed one is an error. Message texts are AgentClash's.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Final

from ..record import references
from ..record.evidence import Evidence
from ..spec.models import JudgeDecl
from .parsing import DEFAULT_SCALE

PREAMBLE: Final = ("You are an evaluation judge for autonomous-agent runs.",
                   "Return only valid JSON. Do not wrap the response in markdown fences.")
REASONING: Final = '"confidence": "low|medium|high", "reasoning": "<brief rationale>"}'
SCHEMAS: Final = {
    "assertion": '{"pass": true|false, ' + REASONING,
    "n_wise": '{"ranking": ["<run_agent_id>", "..."], ' + REASONING,
}
SCORE_SCHEMA: Final = '{"score": <number>, ' + REASONING
HEADINGS: Final = {"assertion": "Assertion:", "rubric": "Rubric:",
                   "reference": "Reference-scoring rubric:"}
CLAUSES_HEADING: Final = "Additional anti-gaming clauses:"
CONTROL_EVIDENCE: Final = "(not shown: this call only checks that the judge answers in time)"
"""What a control call shows in place of each piece of evidence (:func:`without_evidence`)."""


@dataclass(frozen=True)
class Context:
    """The resolved context entries, or why the judge cannot run (``error`` if malformed)."""

    entries: tuple[str, ...] = ()
    reason: str = ""
    error: bool = False
    the_runs: bool = False
    """The reference that is missing names the run's own evidence (see ``is_the_runs``)."""


@dataclass(frozen=True)
class Candidate:
    """One run compared by an n_wise judge."""

    run_agent_id: str
    label: str
    lane_index: int
    entries: tuple[str, ...]

    def within(self, share: int) -> Candidate:
        """This candidate with its evidence cut to ``share`` UTF-8 bytes, and a line saying
        how much is not shown: one run's evidence cannot push the others' judge call past
        the fleet's message limit (evalfleet's rule; AgentClash has no limit)."""
        data = "\n\n".join(self.entries).encode("utf-8")
        if len(data) <= share:
            return self
        kept = data[:share].decode("utf-8", "ignore")
        left = len(data) - len(kept.encode("utf-8"))
        note = f"[{left} more bytes of this candidate's evidence are not shown]"
        return dataclasses.replace(self, entries=(f"{kept}\n{note}",))


def judge_context(judge: JudgeDecl, evidence: Evidence) -> Context:
    """Resolve the judge's ``context_from`` (and ``reference_from``) against the evidence."""
    entries: list[str] = []
    wanted = [(ref, ref, f'judge context "{ref}" is unavailable') for ref in judge.context_from]
    if judge.mode == "reference":
        ref = judge.reference_from
        wanted.append((ref, "reference_answer", f'reference evidence "{ref}" is unavailable'))
    for ref, label, fallback in wanted:
        found = references.resolve(ref, evidence)
        if found.state == "error":
            return Context(reason=found.reason, error=True)
        if not found.available or found.value is None:
            return Context(reason=found.reason or fallback, the_runs=references.is_the_runs(ref))
        entries.append(f"{label}:\n{found.value}")
    return Context(tuple(entries))


def judge_message(judge: JudgeDecl, entries: tuple[str, ...]) -> str:
    """The user message of a rubric, reference or assertion call."""
    body = [*PREAMBLE, f"Response schema: {SCHEMAS.get(judge.mode, SCORE_SCHEMA)}",
            HEADINGS[judge.mode], judge.assertion if judge.mode == "assertion" else judge.rubric]
    if judge.mode == "reference":
        scale = judge.score_scale or DEFAULT_SCALE
        body.append(f"Score using the configured range {scale.min:.2f} to {scale.max:.2f}.")
    return "\n\n".join([*body, "Evaluation context:", *entries, *clauses(judge)])


def n_wise_message(judge: JudgeDecl, candidates: list[Candidate]) -> str:
    """The user message of an n_wise call, candidates in the order given."""
    body = [*PREAMBLE, f"Response schema: {SCHEMAS['n_wise']}", "Task:", judge.prompt,
            "Rank every candidate from best to worst. Include every candidate exactly once "
            "using run_agent_id values only.", "Candidates:"]
    for index, candidate in enumerate(candidates, start=1):
        body += [f"Candidate {index}", f"run_agent_id: {candidate.run_agent_id}",
                 f"label: {candidate.label}", f"lane_index: {candidate.lane_index}",
                 "\n\n".join(candidate.entries)]
    return "\n\n".join([*body, *clauses(judge)])


def without_evidence(entries: tuple[str, ...]) -> tuple[str, ...]:
    """``entries`` with each value replaced by :data:`CONTROL_EVIDENCE`, labels kept: the
    message of a control call, which tells a provider that cannot answer the judge's prompt
    in time from evidence that keeps the model from finishing (:mod:`scoring.judges.faults`)."""
    return tuple(entry.split(":\n", 1)[0] + ":\n" + CONTROL_EVIDENCE for entry in entries)


def clauses(judge: JudgeDecl) -> list[str]:
    """The judge's ``anti_gaming_clauses`` under their heading, after everything else."""
    return [CLAUSES_HEADING, *judge.anti_gaming_clauses] if judge.anti_gaming_clauses else []
