"""The run's record: what the events say happened, below everything that judges it.

:mod:`.events` (the event model, ordered) and :mod:`.event_types` (every type scoring reads
or the worker writes), :mod:`.grader_events` (the worker's grader payloads, written and
read back), :mod:`.transcript` (turns), :mod:`.evidence` (one pass over the events),
:mod:`.references` (evidence references and what they resolve to), :mod:`.pricing` (a
run's model cost) and :mod:`.tally` (test counts and JUnit verdicts from a test's output).
Validators, judges and the engine read it; it imports none of them.

Outside ``scoring``, use the names below (and the two vocabularies, :mod:`.event_types`
and :mod:`.grader_events`).
"""

from __future__ import annotations

from . import event_types, grader_events
from .events import Event, decode_events, order_events
from .evidence import Evidence, ToolCall, extract_evidence, over_limit
from .pricing import Cost, run_model_cost_usd
from .tally import TestCounts, TestVerdict, junit_verdicts, parse_counts, strict_junit

__all__ = [
    "Cost", "Event", "Evidence", "TestCounts", "TestVerdict", "ToolCall", "decode_events",
    "event_types", "extract_evidence", "grader_events", "junit_verdicts", "order_events",
    "over_limit", "parse_counts", "run_model_cost_usd", "strict_junit",
]
