"""Scoring core: validator evaluations per second on one core, and BLEU/chrF against
sacreBLEU's own sentence functions on the same inputs.

The mix cycles through string, JSON and numeric validators, each evaluated through
:func:`scoring.run.validator_run.run_validator` with a prebuilt spec and evidence (config
decode + evidence resolution + check + result), in this one thread.
"""

from __future__ import annotations

import json
import time
from typing import Any

import sacrebleu

from bench.common import Report, Row
from bench.validators import CANDIDATE, REFERENCE, prepared, versus_sacrebleu

INVOICE = json.dumps({"invoice": {"id": "INV-7", "total": 1234.5, "currency": "EUR",
                                  "lines": [{"sku": "A", "qty": 2}, {"sku": "B", "qty": 1}]}})
SCHEMA = {"type": "object", "required": ["invoice"], "properties": {"invoice": {
    "type": "object", "required": ["id", "total"],
    "properties": {"id": {"type": "string"}, "total": {"type": "number"}}}}}
#: (validator type, actual output, expected, config): string, JSON and numeric kinds.
MIX: list[tuple[str, str, str, Any]] = [
    ("exact_match", "Paris", "Paris", None),
    ("contains", CANDIDATE, "lazy dog", None),
    ("regex_match", "order #A-1234 shipped", r"#[A-Z]-\d{4}", None),
    ("normalized_match", "  Hello,   WORLD! ", "hello world",
     {"pipeline": ["trim", "lowercase", "strip_punctuation", "collapse_whitespace"]}),
    ("fuzzy_match", CANDIDATE, REFERENCE, {"threshold": 0.8}),
    ("json_schema", INVOICE, json.dumps(SCHEMA), None),
    ("json_path_match", INVOICE, json.dumps({"path": "$.invoice.total", "value": 1234.5}),
     None),
    ("numeric_match", "The total is $1,234.50 USD", "1234.5",
     {"extract_number": True, "relative_tolerance": 0.001}),
    ("boolean_assert", " Yes ", "true", None),
]




def mix_rate(seconds: float) -> float:
    """Evaluations per second, cycling through :data:`MIX` (one thread)."""
    calls = [prepared(*case) for case in MIX]
    done, started = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - started) < seconds:
        for call in calls:
            call()
        done += len(calls)
    return done / elapsed


def run(report: Report, seconds: float = 1.0) -> None:
    """The validator mix against 10,000/s, and BLEU/chrF against sacreBLEU."""
    rates = sorted(mix_rate(seconds) for _ in range(3))
    row = Row(f"validator mix ({len(MIX)} string/JSON/numeric kinds), one core",
              rates[1], 10_000, "evals/s", "≥ 1.0 (10,000/s)", False)
    row.met = row.ratio >= 1.0
    report.add(row)
    for name, ours, theirs in versus_sacrebleu():
        row = Row(f"{name} sentence score vs sacreBLEU {sacrebleu.__version__}", ours, theirs,
                  "calls/s", "≥ 0.5", False)
        row.met = row.ratio >= 0.5
        report.add(row)
