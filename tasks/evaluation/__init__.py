"""A run's evaluation, as plain functions: request in, :class:`~tasks.messages.RunResult` out.

No Celery, kombu or Redis here, and nothing from :mod:`tasks.platform` or
:mod:`tasks.checking` (pyproject.toml's contracts check both): the Celery task
(:mod:`tasks.run_task`) and ``evalfleet check`` call in, never the other way.

:mod:`.pipeline` (the order of work), :mod:`.packs` with :mod:`.pack_cache` (which pack a
request means; loaded packs kept), :mod:`.plan_builder` and :mod:`.pack_environment` (the
sandbox plan), :mod:`.pack_faults` and :mod:`.refusals` (whose fault a failed step is),
:mod:`.recording` and :mod:`.code_executed` (the sandbox's record as events),
:mod:`.budgets` (runtime budgets), :mod:`.clawdiators` (the Clawdiators evaluator step),
:mod:`.judging` (LLM judge calls), :mod:`.provenance`, :mod:`.rating` (what a rating
update needs), :mod:`.closing` (sandbox removal off the critical path) and
:mod:`.rescoring` (stored results scored again).
"""
