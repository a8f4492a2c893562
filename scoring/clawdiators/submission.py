"""Submission validation with severity (docs/scoring.md §C7).

Each declared check looks at the submission's shape — the submitted files (from the run's
``grader.submission.manifest`` event) or the final output — and passes or fails. A failed
check is a ``submission_warnings`` entry; when its severity is ``error`` it also zeroes the
dimensions it guards (Clawdiators documents "this dimension will score 0"; here it is
enforced). A file check on a run without a manifest is not run, and says so as a warning.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Mapping
from typing import NamedTuple

from ..spec.superset import SubmissionCheck
from ..validators.schemas import check_document

Files = Mapping[str, int]
NO_MANIFEST = "not checked: the run has no submission manifest"


class Finding(NamedTuple):
    """A failed (or unrunnable) check: what the scorecard reports."""

    check: str
    severity: str
    message: str
    guards: tuple[str, ...] = ()


def run_checks(checks: list[SubmissionCheck], files: Files | None,
               final_output: str | None) -> list[Finding]:
    """Findings of every check that failed (declaration order)."""
    findings: list[Finding] = []
    for check in checks:
        if check.type != "output_json_schema" and files is None:
            findings.append(Finding(check.key, "warning", NO_MANIFEST))
            continue
        problem = _problem(check, files or {}, final_output)
        if problem:
            findings.append(Finding(check.key, check.severity, check.message or problem,
                                    tuple(check.guards)))
    return findings


def _problem(check: SubmissionCheck, files: Files, final_output: str | None) -> str:
    if check.type == "output_json_schema":
        return _schema_problem(check, final_output)
    return CHECKS[check.type](check, files)


def _required(check: SubmissionCheck, files: Files) -> str:
    missing = [p for p in check.paths if p not in files]
    return f"missing required files: {', '.join(missing)}" if missing else ""


def _forbidden(check: SubmissionCheck, files: Files) -> str:
    hits = sorted(p for p in files if any(fnmatch.fnmatchcase(p, g) for g in check.paths))
    return f"forbidden paths submitted: {', '.join(hits)}" if hits else ""


def _max_files(check: SubmissionCheck, files: Files) -> str:
    limit = check.limit or 0
    return f"{len(files)} files submitted, more than {limit}" if len(files) > limit else ""


def _max_file_bytes(check: SubmissionCheck, files: Files) -> str:
    big = sorted(p for p, size in files.items() if size > (check.limit or 0))
    return f"files over {check.limit} bytes: {', '.join(big)}" if big else ""


def _max_total_bytes(check: SubmissionCheck, files: Files) -> str:
    total = sum(files.values())
    return f"{total} bytes submitted, more than {check.limit}" if total > (check.limit or 0) else ""


def _schema_problem(check: SubmissionCheck, final_output: str | None) -> str:
    if final_output is None:
        return "no final output to check against the schema"
    outcome = check_document(final_output, check.schema_)
    if outcome.state == "available" and outcome.verdict == "pass":
        return ""
    detail = outcome.evidence.get("validation_error") or outcome.reason
    return f"final output does not match the schema: {detail}"


CHECKS: dict[str, Callable[[SubmissionCheck, Files], str]] = {
    "required_files": _required,
    "forbidden_paths": _forbidden,
    "max_files": _max_files,
    "max_file_bytes": _max_file_bytes,
    "max_total_bytes": _max_total_bytes,
}
