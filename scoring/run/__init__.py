"""The run engine: a spec, a run's events and its case in; a scorecard out. Pure.

:mod:`.engine` (``evaluate``, the order of work), :mod:`.inputs` and :mod:`.events` (the
run's inputs decoded, events ordered), :mod:`.evidence` with :mod:`.grader_events` and
:mod:`.transcript` (what the events say happened), :mod:`.references` (evidence references
and what they resolve to), :mod:`.validator_run` (one declared validator),
:mod:`.collectors` (metric collectors), :mod:`.behavioral`, :mod:`.pricing`,
:mod:`.dimensions` (each dimension source), :mod:`.strategies` (the overall verdict),
:mod:`.records` (result records) and :mod:`.scorecard` (the document, on the 0–1000
scale), :mod:`.semantics` (the version of these semantics results record).
"""
