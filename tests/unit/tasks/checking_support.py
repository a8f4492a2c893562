"""Builders for the check's unit tests: a pack, its subject, and run results by hand."""

from __future__ import annotations

import copy
from typing import Any

from evalfleet.scoring import Scorecard, load_pack
from evalfleet.tasks.checking import Subject
from evalfleet.tasks.evaluation.packs import sandbox_block
from evalfleet.tasks.messages import RunResult, Submission

PACK: dict[str, Any] = {
    "pack": {"slug": "answer"},
    "version": {
        "sandbox": {"reference": "ref", "setup_commands": [{"run": "make tools"}]},
        "evaluation_spec": {
            "name": "answer", "version_number": 2, "judge_mode": "deterministic",
            "post_execution_checks": [{"key": "answer", "type": "file_capture",
                                       "path": "/workspace/answer.txt"}],
            "validators": [{"key": "says_42", "type": "contains", "target": "final_output",
                            "expected_from": "literal:42"}],
            "scorecard": {"dimensions": ["correctness"]},
        },
    },
    "input_sets": [{"key": "default", "cases": [{"case_key": "c1"}, {"case_key": "c2"}]}],
}


def subject(runs: int = 5, case: str = "c1", **sandbox: Any) -> Subject:
    """The subject of one case of :data:`PACK` (``sandbox`` keys replace the pack's)."""
    manifest = copy.deepcopy(PACK)
    manifest["version"]["sandbox"].update(sandbox)
    pack = load_pack(manifest)
    return Subject(pack=pack, manifest=manifest, block=sandbox_block(pack),
                   case=pack.case(case), reference=Submission(files={"answer.txt": "42"}),
                   runs=runs)


def card(score: int | None = 1000, result: str | None = "win", validity: str = "valid",
         verdicts: dict[str, str] | None = None, reason: str = "weighted: fine") -> Scorecard:
    """A scorecard with the given verdicts (validator key → pass | fail)."""
    details = [{"key": key, "type": "contains", "verdict": verdict, "state": "available",
                "outcome_class": verdict, "reason": "", "normalized_score": None}
               for key, verdict in (verdicts or {"says_42": "pass"}).items()]
    return Scorecard.model_validate({
        "status": "complete", "strategy": "weighted", "overall_score": None,
        "passed": result == "win", "overall_reason": reason, "validity": validity,
        "validity_reason": "" if validity == "valid" else "dimension x is unavailable",
        "validator_details": details, "score": score, "result": result})


def event(kind: str, **payload: Any) -> dict[str, Any]:
    return {"type": kind, "sequence_number": 1, "occurred_at": "2026-01-01T00:00:00Z",
            "payload": payload}


def code_executed(key: str = "tests", exit_code: int | None = 0, passed: int | None = 1,
                  total: int | None = 1, cases: dict[str, str] | None = None,
                  **extra: Any) -> dict[str, Any]:
    """A ``grader.verification.code_executed`` event (``cases``: test name → verdict)."""
    payload: dict[str, Any] = {
        "validator_key": key, "test_command": "run-tests", "timeout_ms": 1000,
        "exit_code": exit_code, "stdout": "", "stderr": "", "timed_out": False,
        "execution_error": "", "passed_tests": passed, "total_tests": total,
        "test_cases": [{"name": n, "classname": "suite", "verdict": v}
                       for n, v in (cases or {}).items()]}
    return event("grader.verification.code_executed", **{**payload, **extra})


def result(scorecard: Scorecard | None = None, events: list[dict[str, Any]] | None = None,
           outcome: str = "scored", reason: str = "", total_ms: float = 1000.0,
           **resources: Any) -> RunResult:
    """A run's result (a winning scorecard unless given)."""
    return RunResult(run_id="r", outcome=outcome, reason=reason,  # type: ignore[arg-type]
                     scorecard=scorecard if scorecard is not None or outcome != "scored"
                     else card(), events=events or [], timings_ms={"total": total_ms},
                     resources={"image": "img", "image_id": "sha256:abc", "runtime": "runsc",
                                "limits": {"wall_timeout_s": 10.0}, **resources})
