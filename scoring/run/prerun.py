"""The pre-run check: what the submitted events already decide before any sandbox starts.

The pipeline calls :func:`prerun_check` once per run, on the events the platform supplied
with the submission. Each registered layer (:mod:`scoring.layers`) whose check the spec
asks for looks at them; the events are decoded and their evidence extracted once, and only
when some layer asks. A spec that asks for none never has its events read here.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .. import layers
from ..record.events import decode_events
from ..record.evidence import extract_evidence
from ..spec.models import EvaluationSpec


def prerun_check(spec: EvaluationSpec, events: Iterable[Any]) -> str | None:
    """Why the run must end before it starts (``system.run.failed``), or None to run it.

    Raises:
        pydantic.ValidationError: an event does not decode (only when a check reads them).
    """
    asking = [layer for layer in layers.registered() if layer.checks_before_run(spec)]
    if not asking:
        return None
    decoded = decode_events(list(events))
    evidence = extract_evidence(decoded)
    for layer in asking:
        reason = layer.prerun(spec, evidence, layer.read(decoded))
        if reason is not None:
            return reason
    return None
