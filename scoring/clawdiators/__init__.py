"""The Clawdiators layer: a documented superset of AgentClash's evaluation spec.

A spec opts in with an ``evaluation_spec.clawdiators`` block and/or the dimension sources
``script``, ``speed``, ``token_efficiency`` and ``call_efficiency``. A spec that uses none of
them scores exactly as AgentClash would. What it does is told in docs/scoring.md §C:
weights (§C1), speed (§C2), efficiency and the verified trajectory (§C3, §C4), the
evaluator (§C5), constraints (§C6), submission checks (§C7), the 0–1000 scale (§C8).

It sits on the scoring core and plugs into it through one seam: :data:`.layer.LAYER`, a
:class:`scoring.layers.Layer`, registered here (``scoring/__init__.py`` imports this
package); the core imports nothing from it. Its spec fields are declared with the spec
(:mod:`scoring.spec.superset`), its scorecard fields with the scorecard.

Modules: :mod:`.rules` (load-time checks), :mod:`.runinfo` (what the layer reads from a
run's events), :mod:`.sources` (its dimension sources and collector), :mod:`.submission`,
:mod:`.constraints`, :mod:`.speed`, :mod:`.efficiency`, :mod:`.script` and :mod:`.layer`
(the hooks: applying it all to a scored run, and the pre-run check). Outside ``scoring``,
its one name is :func:`.runinfo.trajectory_verified`, re-exported by ``scoring``.
"""

from __future__ import annotations

from ..layers import register
from .layer import LAYER
from .runinfo import trajectory_verified

__all__ = ["trajectory_verified"]

register(LAYER)
