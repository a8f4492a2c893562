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

The names load when first used (PEP 562): the wire (:mod:`tasks.messages`) imports
:class:`Scorecard`, and a platform's client must not load the engine (RE2, sacreBLEU,
rapidfuzz, jsonschema) to read a result. The layers ``scoring`` ships (the Clawdiators
layer) register themselves as the core that reads them is imported
(:func:`scoring.layer_sources.ship`), however the core was reached.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from . import layer_sources

if TYPE_CHECKING:
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

#: Each public name → the module it comes from (``placeholders`` is that module).
_HOMES = {
    "AGENTCLASH_COMMIT": ".run.semantics", "SEMANTICS_VERSION": ".run.semantics",
    "Case": ".spec.cases", "CaseError": ".spec.cases", "find_case": ".spec.cases",
    "Dimension": ".spec.models", "EvaluationSpec": ".spec.models",
    "spec_json_schema": ".spec.models",
    "FieldError": ".errors", "InputError": ".errors", "ScoringError": ".errors",
    "SpecError": ".errors",
    "Pack": ".spec.loading", "load_pack": ".spec.loading", "load_spec": ".spec.loading",
    "Scorecard": ".run.scorecard", "decode_cases": ".run.inputs", "evaluate": ".run.engine",
    "placeholders": ".spec.placeholders", "prerun_check": ".run.prerun",
    "run_validator": ".run.validator_run", "trajectory_verified": ".clawdiators",
}


def _ship_clawdiators() -> None:
    from . import clawdiators  # noqa: F401  (the layer registers itself with the core)


layer_sources.ship(_ship_clawdiators)


def __getattr__(name: str) -> Any:
    """A public name, imported on first use (see the module docstring).

    Raises:
        AttributeError: ``name`` is not one of scoring's public names.
    """
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = import_module(_HOMES[name], __name__)
    value = module if _HOMES[name].endswith(f".{name}") else getattr(module, name)
    globals()[name] = value
    return value

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
