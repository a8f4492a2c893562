"""The names of the dimension sources the registered layers add (:mod:`scoring.layers`).

The spec document reads them (a layer's source is "higher" unless the spec says otherwise)
and sits below the layers, whose hooks are typed in its terms; so the names live here, below
both. :func:`scoring.layers.register` records them, and nothing else writes them.

The layers ``scoring`` ships are imported with :mod:`scoring.layers` (the core that reads
them), or at the first read of these names, whichever comes first (:func:`ship`,
:func:`load_shipped`), not when ``scoring`` is: the wire's light documents (the scorecard)
live in ``scoring`` too, and a platform's client reads them without the engine.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

_BY_LAYER: dict[str, frozenset[str]] = {}
_UNSHIPPED: list[Callable[[], None]] = []


def ship(load: Callable[[], None]) -> None:
    """Run ``load`` (it imports a layer ``scoring`` ships, which registers itself) before
    the layers are read."""
    _UNSHIPPED.append(load)


def load_shipped() -> None:
    """Import the shipped layers not imported yet (every reader of the layers calls it)."""
    while _UNSHIPPED:
        _UNSHIPPED.pop(0)()


def record(layer: str, names: Iterable[str]) -> None:
    """Record the source names of ``layer`` (replacing what it had)."""
    _BY_LAYER[layer] = frozenset(names)


def sources() -> frozenset[str]:
    """Every dimension source of every registered layer."""
    load_shipped()
    return frozenset(name for names in _BY_LAYER.values() for name in names)
