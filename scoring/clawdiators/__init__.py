"""The Clawdiators layer: a documented superset of AgentClash's evaluation spec.

A spec opts in with an ``evaluation_spec.clawdiators`` block and/or the dimension sources
``script``, ``speed``, ``token_efficiency`` and ``call_efficiency``. A spec that uses none of
them scores exactly as AgentClash would. The reference behaviour is
``clawdiators-scoring.md``: weights (§2), speed (§5), evaluator dispatch and efficiency (§8),
submission validation (§10).

Modules: :mod:`.models` (the spec blocks), :mod:`.rules` (load-time checks),
:mod:`.runinfo` (what the layer reads from a run's events), :mod:`.submission`,
:mod:`.constraints`, :mod:`.speed`, :mod:`.efficiency`, :mod:`.script` and :mod:`.layer`
(applying it all to a scored run).
"""
