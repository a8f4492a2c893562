"""Micro-benchmark: validator evaluations per second, and BLEU/chrF against sacreBLEU.

Run with ``python -m bench.validators`` (or ``python bench/validators.py``) from the
repository root. Each validator type is evaluated through
:func:`scoring.run.validator_run.run_validator` with a prebuilt spec and evidence, so the
numbers include config decoding, evidence resolution and result building. The second
table times the bare BLEU/chrF arithmetic against ``sacrebleu.sentence_bleu`` /
``sentence_chrf`` on the same sentence pairs. Numbers go in ``BENCHMARKS.md``; nothing
here is a timed assertion.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import sacrebleu

from evalfleet.scoring import Case, EvaluationSpec, run_validator
from evalfleet.scoring.compat import split_words
from evalfleet.scoring.record import decode_events, extract_evidence
from evalfleet.scoring.validators.bleu_score import bleu
from evalfleet.scoring.validators.chrf_score import best_chrf

CANDIDATE = "The quick brown fox jumps over the lazy dog near the river bank today"
REFERENCE = "A quick brown fox jumped over the lazy dog by the river bank today"
CASES: dict[str, tuple[str, str, Any]] = {
    "boolean_assert": (" Yes ", "true", None),
    "fuzzy_match": (CANDIDATE, REFERENCE, {"threshold": 0.8, "case_insensitive": True}),
    "numeric_match": ("The total is $1,234.50 USD", "1234.5",
                      {"extract_number": True, "relative_tolerance": 0.001}),
    "normalized_match": ("  Hello,   WORLD! ", "hello world",
                         {"pipeline": ["trim", "lowercase", "strip_punctuation",
                                       "collapse_whitespace"]}),
    "token_f1": (CANDIDATE, REFERENCE, {"normalize": True, "remove_articles": True}),
    "bleu_score": (CANDIDATE, REFERENCE, {"smoothing": "method1"}),
    "rouge_score": (CANDIDATE, REFERENCE, {"variant": "rouge-l"}),
    "chrf_score": (CANDIDATE, REFERENCE, None),
}


def per_second(function: Callable[[], object], seconds: float = 0.5) -> float:
    """Calls per second of ``function`` over roughly ``seconds`` of wall time."""
    calls, start = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        for _ in range(50):
            function()
        calls += 50
    return calls / elapsed


def prepared(vtype: str, actual: str, expected: str, config: Any) -> Callable[[], object]:
    """One validator ready to evaluate (spec and evidence built once)."""
    spec = EvaluationSpec.model_validate({
        "name": "bench", "version_number": 1, "judge_mode": "deterministic",
        "validators": [{"key": "v", "type": vtype, "target": "final_output",
                        "expected_from": "literal:" + expected, "config": config}],
        "scorecard": {"dimensions": ["correctness"]}})
    events = [{"type": "system.run.completed", "occurred_at": "2026-01-01T00:00:00Z",
               "payload": {"final_output": actual}}]
    evidence = extract_evidence(decode_events(events), list[Case]())
    decl = spec.validators[0]
    result = run_validator(decl, spec, evidence)
    if getattr(result, "state", None) == "error" or getattr(result, "verdict", "") == "error":
        raise RuntimeError(f"bench validator {vtype} errors: {result}")
    return lambda: run_validator(decl, spec, evidence)


def validator_rate(vtype: str, actual: str, expected: str, config: Any) -> float:
    """Evaluations per second of one validator through run_validator."""
    return per_second(prepared(vtype, actual, expected, config))


def versus_sacrebleu() -> list[tuple[str, float, float]]:
    """(metric, our calls/s, sacreBLEU calls/s) on the same sentence pair."""
    cand, refs = split_words(CANDIDATE), [split_words(REFERENCE)]
    return [
        ("BLEU", per_second(lambda: bleu(cand, refs, 4, "method1")),
         per_second(lambda: sacrebleu.sentence_bleu(CANDIDATE, [REFERENCE]))),
        ("chrF", per_second(lambda: best_chrf(CANDIDATE, [REFERENCE], 6, 2.0)),
         per_second(lambda: sacrebleu.sentence_chrf(CANDIDATE, [REFERENCE]))),
    ]


def main() -> None:
    """Print both tables as Markdown."""
    print(f"Python {sys.version.split()[0]}\n")
    print("| validator | evaluations/s |\n| --- | ---: |")
    for vtype, (actual, expected, config) in CASES.items():
        print(f"| `{vtype}` | {validator_rate(vtype, actual, expected, config):,.0f} |")
    print("\n| metric | evalfleet calls/s | sacreBLEU calls/s | ratio (evalfleet/sacreBLEU) |")
    print("| --- | ---: | ---: | ---: |")
    for name, ours, theirs in versus_sacrebleu():
        print(f"| {name} | {ours:,.0f} | {theirs:,.0f} | {ours / theirs:.1f}× |")


if __name__ == "__main__":
    main()
