"""evalfleet's scoring core: AgentClash evaluation semantics on the Clawdiators scale.

Pure: no Celery, no Redis, no Docker, no clock. A stored run can be re-scored anywhere.

    spec = load_spec("pack.yaml")
    card = evaluate(spec, events, cases)
"""

from __future__ import annotations

from .cases import Case, CaseError
from .engine import evaluate
from .errors import FieldError, InputError, ScoringError, SpecError
from .loading import Pack, load_pack, load_spec
from .scorecard import Scorecard
from .spec import EvaluationSpec

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
