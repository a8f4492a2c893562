"""The names of the dimension sources the registered layers add (:mod:`scoring.layers`).

The spec document reads them (a layer's source is "higher" unless the spec says otherwise)
and sits below the layers, whose hooks are typed in its terms; so the names live here, below
both. :func:`scoring.layers.register` records them, and nothing else writes them.
"""

from __future__ import annotations

from collections.abc import Iterable

_BY_LAYER: dict[str, frozenset[str]] = {}


def record(layer: str, names: Iterable[str]) -> None:
    """Record the source names of ``layer`` (replacing what it had)."""
    _BY_LAYER[layer] = frozenset(names)


def sources() -> frozenset[str]:
    """Every dimension source of every registered layer."""
    return frozenset(name for names in _BY_LAYER.values() for name in names)
