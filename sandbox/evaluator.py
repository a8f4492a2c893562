"""The custom-script evaluator's values (Clawdiators layer, docs/scoring.md §C5): what the
pipeline asks for (:class:`EvaluatorRun`) and what the step records
(:class:`EvaluatorRecord`).

The step runs last in a plan, after the candidate is stopped and everything is captured, so
nothing it does can change the run's other evidence: :mod:`sandbox.evaluation.evaluator`
runs it as a sealed run (:mod:`sandbox.sealed`) where the driver offers one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

SCRIPT_NAMES = {"python": "evaluator.py", "shell": "evaluator.sh"}
INTERPRETERS = {"python": "python3", "shell": "sh"}
GROUND_TRUTH = "ground-truth.json"


@dataclass(frozen=True)
class EvaluatorRun:
    """What the pipeline asks for."""

    runtime: str
    """``python`` or ``shell``."""
    script: str
    ground_truth: bytes = b"null"
    timeout_s: float = 60.0
    memory_bytes: int = 512 * 1024 * 1024
    output_cap_bytes: int | None = None
    """Cap per output stream; ``None`` means the profile's default."""
    env: Mapping[str, str] = field(default_factory=dict)

    @property
    def script_name(self) -> str:
        return SCRIPT_NAMES.get(self.runtime, "evaluator")


@dataclass(frozen=True)
class EvaluatorRecord:
    """The ``grader.evaluator.completed`` record."""

    runtime: str
    exit_code: int | None
    stdout: str
    stderr: str
    timed_out: bool = False
    error: str = ""
    truncated: bool = False
    timeout_ms: int = 0
    duration_s: float = 0.0
