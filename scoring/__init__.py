"""evalfleet's scoring core: AgentClash evaluation semantics on the Clawdiators scale.

Pure: no Celery, no Redis, no Docker, no clock. A stored run can be re-scored anywhere.

Sub-packages by role: :mod:`scoring.spec` (the spec document: models, loading, load-time
rules), :mod:`scoring.run` (the run engine: events to scorecard), :mod:`scoring.validators`
(one module per validator type), :mod:`scoring.judges` (LLM judges, the pure half),
:mod:`scoring.compat` (Go's and AgentClash's ways with JSON, YAML, text and numbers), and
:mod:`scoring.clawdiators` (the Clawdiators layer). The names below are the public API.

    spec = load_spec("pack.yaml")
    card = evaluate(spec, events, cases)
"""

from __future__ import annotations

from . import clawdiators  # noqa: F401  (the layer registers itself with the core)
from .errors import FieldError, InputError, ScoringError, SpecError
from .run.engine import evaluate
from .run.scorecard import Scorecard
from .spec.cases import Case, CaseError
from .spec.loading import Pack, load_pack, load_spec
from .spec.models import EvaluationSpec

__all__ = [
    "Case",
    "CaseError",
    "EvaluationSpec",
    "FieldError",
    "InputError",
    "Pack",
    "Scorecard",
    "ScoringError",
    "SpecError",
    "evaluate",
    "load_pack",
    "load_spec",
]
