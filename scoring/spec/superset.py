"""The Clawdiators superset of the spec document: the ``clawdiators`` block and the
dimension fields ``score_key``, ``speed`` and ``efficiency`` (strict, like every spec model).

Declared here, with the spec, so the document has one definition (``evalfleet schema spec``
prints it whole). What the fields mean is the layer's (:mod:`scoring.clawdiators`), which
plugs into the core through :mod:`scoring.layers`; a spec that sets none of them is plain
AgentClash.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

#: Clawdiators' evaluator defaults (docs/scoring.md §C5): 60 s, 512 MB.
EVALUATOR_TIMEOUT_MS = 60_000
EVALUATOR_MEMORY_MB = 512

SEVERITIES = ("error", "warning")
CHECK_TYPES = ("required_files", "forbidden_paths", "max_files", "max_file_bytes",
               "max_total_bytes", "output_json_schema")
SPEED_FORMULAS = ("linear", "legacy_linear", "power")
RUNTIMES = ("python", "shell")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class SubmissionCheck(_Strict):
    """One check on the submission's shape (§C7), with a severity and the dimensions it
    guards: an ``error`` zeroes them, a ``warning`` is advisory."""

    key: str = ""
    type: str = ""
    severity: str = "error"
    guards: list[str] = Field(default_factory=list)
    paths: list[str] = Field(default_factory=list)
    """``required_files``: exact paths; ``forbidden_paths``: glob patterns (fnmatch)."""
    limit: int | None = None
    """``max_files`` (count), ``max_file_bytes`` / ``max_total_bytes`` (bytes)."""
    schema_: Any = Field(default=None, alias="schema")
    """``output_json_schema``: the JSON Schema the final output must parse and validate as."""
    message: str = ""
    """Shown instead of the generated message when the check fails."""

    model_config = ConfigDict(extra="forbid", strict=True, populate_by_name=True)


class Constraints(_Strict):
    """Runtime limits reported as ``constraint_violations`` (§C6); budgets for efficiency."""

    max_duration_ms: int | None = None
    max_total_tokens: int | None = None
    max_tool_calls: int | None = None
    max_llm_calls: int | None = None
    max_cost_usd: float | None = None
    token_budget: int | None = None
    """The ``token_efficiency`` budget when the dimension names none."""
    enforce: bool = False
    """Clawdiators only reports violations. With ``enforce``, a violation found before any
    container starts (in the submitted trajectory) ends the run as ``system.run.failed``
    without starting a sandbox."""


class Evaluator(_Strict):
    """A custom-script evaluator run in the sandbox after the candidate is stopped (§C5)."""

    runtime: str = "python"
    """``python`` (``python3 evaluator.py``) or ``shell`` (``sh evaluator.sh``)."""
    script: str = ""
    ground_truth: Any = None
    """Written as ``ground-truth.json`` where only the evaluator sees it."""
    timeout_ms: int = EVALUATOR_TIMEOUT_MS
    memory_mb: int = EVALUATOR_MEMORY_MB
    score_scale: int = 1000
    """What a full score is in the script's output: ``1000`` (Clawdiators) or ``1``."""


class ClawdiatorsBlock(_Strict):
    """``evaluation_spec.clawdiators``."""

    weights_sum_to_one: bool = False
    """Clawdiators' weight rule (§C1): the load fails unless |Σ weight − 1| < 0.001."""
    constraints: Constraints | None = None
    submission_checks: list[SubmissionCheck] = Field(default_factory=list)
    evaluator: Evaluator | None = None


class SpeedConfig(_Strict):
    """A ``speed`` dimension (§C2): ``formula`` A (default), B or C over ``limit_ms``."""

    formula: str = "linear"
    limit_ms: int | None = None
    """Default: ``clawdiators.constraints.max_duration_ms``, then
    ``runtime_limits.max_duration_ms``."""
    gate_on: list[str] = Field(default_factory=list)
    """Dimension keys: speed scores 0 when none of them scores above 0 (§C2 gating)."""


class EfficiencyConfig(_Strict):
    """A ``token_efficiency`` (``budget``) or ``call_efficiency`` (``optimal``, ``max``)
    dimension (§C3)."""

    budget: int | None = None
    optimal: int = 0
    max: int | None = None
