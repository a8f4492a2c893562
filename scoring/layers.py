"""The one seam between the scoring core and a layer on top of it (the Clawdiators layer).

The core (:mod:`scoring.spec`, :mod:`scoring.run` and what they use) imports nothing from a
layer. A layer imports the core, builds one :class:`Layer` and calls :func:`register`;
``scoring/__init__.py`` ships its layers (:func:`scoring.layer_sources.ship`): they are
imported with this module (below), so any use of the core sees them.
A layer may add exactly what a :class:`Layer` has room for:

* dimension sources, valid in a spec that opts in (their direction is always "higher");
* metric collectors, available to a spec that opts in (to any other spec they are unknown);
* load-time rules, run after AgentClash's;
* a reading of a run's events, taken once per run and handed back to its sources,
  collectors and hooks;
* an adjustment of the scored dimensions, and the scorecard fields a layer fills
  (:class:`Additions`: the scorecard document declares them);
* a pre-run check of the submitted events, which can end a run before any sandbox starts.

A layer's spec fields are declared with the spec document (:mod:`scoring.spec.superset`),
as its scorecard fields are with the scorecard (:mod:`scoring.run.scorecard`): each document
has one definition. A spec that opts into no layer scores exactly as AgentClash would.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from . import layer_sources

if TYPE_CHECKING:
    from .errors import FieldError
    from .record.events import Event
    from .record.evidence import Evidence
    from .run.collector import Collector
    from .run.records import DimensionResult
    from .run.scorecard import ConstraintViolation, SubmissionWarning
    from .run.source import Source
    from .spec.models import EvaluationSpec


@dataclass(frozen=True)
class Additions:
    """The scorecard fields a layer fills (empty for a spec that does not use it)."""

    submission_warnings: list[SubmissionWarning] = field(default_factory=list)
    constraint_violations: list[ConstraintViolation] = field(default_factory=list)
    harness_warning: str | None = None


@dataclass(frozen=True)
class Adjusted:
    """A layer's view of a scored run: the dimensions as it leaves them, and its fields."""

    dimensions: list[DimensionResult]
    additions: Additions = field(default_factory=Additions)


@dataclass(frozen=True)
class Layer:
    """What one layer adds to the core (see the module docstring)."""

    name: str
    opted_in: Callable[[EvaluationSpec], bool]
    """Whether a spec opts into the layer (its sources are valid, its collectors known)."""
    sources: Mapping[str, Source]
    collectors: Mapping[str, Collector]
    rules: Callable[[EvaluationSpec, list[FieldError]], None]
    """Append the layer's load-time findings for a spec."""
    read: Callable[[list[Event]], object]
    """The layer's reading of a run's events (pure), passed back as ``readings[name]``."""
    adjust: Callable[[EvaluationSpec, Evidence, object, list[DimensionResult]], Adjusted]
    """Given the spec, evidence, the layer's reading and the scored dimensions."""
    checks_before_run: Callable[[EvaluationSpec], bool]
    """Whether a spec asks for :attr:`prerun` (the events are read only then)."""
    prerun: Callable[[EvaluationSpec, Evidence, object], str | None]
    """Why the submitted events end the run before any sandbox starts, or None."""


_LAYERS: list[Layer] = []


def register(layer: Layer) -> None:
    """Add ``layer`` to the core (once per name; registering a name again replaces it)."""
    _LAYERS[:] = [known for known in _LAYERS if known.name != layer.name] + [layer]
    layer_sources.record(layer.name, layer.sources)


def registered() -> tuple[Layer, ...]:
    """Every registered layer, in registration order."""
    layer_sources.load_shipped()
    return tuple(_LAYERS)


def sources() -> frozenset[str]:
    """Every dimension source of every registered layer."""
    return layer_sources.sources()


def sources_for(spec: EvaluationSpec) -> tuple[str, ...]:
    """The layers' dimension sources valid in ``spec`` (of the layers it opts into)."""
    return tuple(name for layer in registered() if layer.opted_in(spec) for name in layer.sources)


def source(name: str) -> Source | None:
    """The registered layer source called ``name``, if any."""
    return next((layer.sources[name] for layer in registered() if name in layer.sources), None)


def collector(spec: EvaluationSpec, name: str) -> Collector | None:
    """The collector ``name`` of a layer ``spec`` opts into, if any."""
    return next((layer.collectors[name] for layer in registered()
                 if name in layer.collectors and layer.opted_in(spec)), None)


# The layers scoring ships register as soon as the core that reads them is imported (not at
# the first read, inside a run): see scoring.layer_sources.ship.
layer_sources.load_shipped()
