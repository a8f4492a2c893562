"""The run engine: a spec, a run's events and its case in; a scorecard out. Pure.

:mod:`.engine` (``evaluate``, the order of work), :mod:`.inputs` (the run's inputs
decoded), :mod:`.validator_run` (one declared validator), :mod:`.collector` and
:mod:`.collectors` (what a metric collector is; the built-in ones), :mod:`.behavioral`,
:mod:`.source` and :mod:`.dimensions` (what a dimension source is; each built-in one),
:mod:`.strategies` (the overall verdict), :mod:`.prerun` (what the submitted events decide
before any sandbox starts), :mod:`.records` (result records) and :mod:`.scorecard` (the
document, on the 0–1000 scale), :mod:`.semantics` (the version of these semantics results
record). What the events say happened is :mod:`scoring.record`, below this.
"""
