"""Long texts: ROUGE-L and token_f1 on a 5,000-token candidate and reference.

Run with ``python -m bench long_text`` (or ``python -m bench.long_text``) from the
repository root; no Docker or Redis. Each validator is timed through
:func:`scoring.run.validator_run.run_validator` (text prep, tokenizing, arithmetic, result),
next to a baseline measured in the same process:

* ROUGE-L: the same validator with the quadratic pure-Python LCS evalfleet used before
  issue 15 (kept here as :func:`quadratic_lcs`);
* token_f1: the bare multiset F1 (two ``Counter``s on pre-split tokens), the floor of
  any Python implementation: the ratio is what tokenizing and the result cost on top.

The texts are seeded pseudo-random words (2,000-word vocabulary); the reference changes
a fifth of the candidate's tokens, so the LCS is long (no shortcut for equal texts).
"""

from __future__ import annotations

import random
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import Report, Row, median
from bench.validators import prepared
from evalfleet.scoring.validators import rouge_score

TOKENS = 5000


def texts(tokens: int = TOKENS, seed: int = 15) -> tuple[str, str]:
    """(candidate, reference): ``tokens`` words each, a fifth of them changed."""
    rng = random.Random(seed)
    vocabulary = [f"w{i}" for i in range(2000)]
    candidate = [rng.choice(vocabulary) for _ in range(tokens)]
    reference = [t if rng.random() > 0.2 else rng.choice(vocabulary) for t in candidate]
    return " ".join(candidate), " ".join(reference)


def quadratic_lcs(a: Sequence[str], b: Sequence[str]) -> int:
    """evalfleet's LCS before issue 15: the textbook O(n·m) dynamic program in Python."""
    if not a or not b:
        return 0
    previous = [0] * (len(b) + 1)
    for token in a:
        current = [0] * (len(b) + 1)
        for j, other in enumerate(b, start=1):
            current[j] = previous[j - 1] + 1 if token == other else max(previous[j], current[j - 1])
        previous = current
    return previous[-1]


def bare_f1(prediction: list[str], reference: list[str]) -> float:
    """Multiset-overlap F1 with nothing around it."""
    overlap = sum((Counter(prediction) & Counter(reference)).values())
    precision, recall = overlap / len(prediction), overlap / len(reference)
    return 2 * precision * recall / (precision + recall) if overlap else 0.0


def median_ms(action: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        action()
        times.append((time.perf_counter() - started) * 1000)
    return median(times)


def run(report: Report, repeats: int = 5) -> None:
    """ROUGE-L against the quadratic LCS; token_f1 against the bare arithmetic."""
    candidate, reference = texts()
    rouge = prepared("rouge_score", candidate, reference, {"variant": "rouge-l"})
    ours = median_ms(rouge, repeats)
    with mock.patch.object(rouge_score, "lcs_length", quadratic_lcs):
        before = median_ms(rouge, max(1, repeats // 5))
    row = Row(f"ROUGE-L at {TOKENS:,} tokens vs the quadratic LCS before issue 15", ours,
              before, "ms", "≤ 0.1", False)
    row.met = row.ratio <= 0.1
    report.add(row)
    f1 = prepared("token_f1", candidate, reference, {"normalize": True})
    prediction, expected = candidate.split(), reference.split()
    many = 10 * repeats  # a few ms each: more repetitions steady the medians
    row = Row(f"token_f1 at {TOKENS:,} tokens vs bare Counter F1", median_ms(f1, many),
              median_ms(lambda: bare_f1(prediction, expected), many), "ms", "≤ 3.0", False)
    row.met = row.ratio <= 3.0
    report.add(row)


def main() -> None:
    report = Report()
    print("| case | evalfleet | baseline | ratio | target | |\n"
          "| --- | ---: | ---: | ---: | --- | --- |")
    run(report)


if __name__ == "__main__":
    main()
