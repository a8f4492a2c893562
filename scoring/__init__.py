"""evalfleet's scoring core: AgentClash evaluation semantics on the Clawdiators scale.

Pure: no Celery, no Redis, no Docker, no clock. A stored run can be re-scored anywhere.

Sub-packages by role, top to bottom (pyproject.toml's contracts keep the order):
:mod:`scoring.clawdiators` (the Clawdiators layer, plugged in through :mod:`scoring.layers`),
:mod:`scoring.run` (the run engine: events to scorecard), :mod:`scoring.validators` (one
module per validator type) and :mod:`scoring.judges` (LLM judges, the pure half),
:mod:`scoring.record` (the run's record: what its events say happened), and
:mod:`scoring.compat` (Go's and AgentClash's ways with JSON, YAML, text and numbers);
:mod:`scoring.spec` is the spec document (models, loading, load-time rules).

Code outside ``scoring`` uses its public face: the names below, and those of
:mod:`scoring.record`, :mod:`scoring.judges`, :mod:`scoring.validators` and
:mod:`scoring.compat`.

    spec = load_spec("pack.yaml")
    card = evaluate(spec, events, cases)
"""

from __future__ import annotations

from . import clawdiators  # noqa: F401  (the layer registers itself with the core)
from .clawdiators import trajectory_verified
from .errors import FieldError, InputError, ScoringError, SpecError
from .run.engine import evaluate
from .run.inputs import decode_cases
from .run.prerun import prerun_check
from .run.scorecard import Scorecard
from .run.semantics import AGENTCLASH_COMMIT, SEMANTICS_VERSION
from .run.validator_run import run_validator
from .spec import placeholders
from .spec.cases import Case, CaseError, find_case
from .spec.loading import Pack, load_pack, load_spec
from .spec.models import Dimension, EvaluationSpec, spec_json_schema

__all__ = [
    "AGENTCLASH_COMMIT",
    "SEMANTICS_VERSION",
    "Case",
    "CaseError",
    "Dimension",
    "EvaluationSpec",
    "FieldError",
    "InputError",
    "Pack",
    "Scorecard",
    "ScoringError",
    "SpecError",
    "decode_cases",
    "evaluate",
    "find_case",
    "load_pack",
    "load_spec",
    "placeholders",
    "prerun_check",
    "run_validator",
    "spec_json_schema",
    "trajectory_verified",
]
