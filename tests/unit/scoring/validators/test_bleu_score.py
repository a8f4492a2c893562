"""bleu_score (docs/scoring.md §5.12): AgentClash's sentence BLEU, reference parsing, sacrebleu
option."""

from __future__ import annotations

import math
from typing import Any

import pytest
import sacrebleu
from hypothesis import given
from hypothesis import strategies as st
from unit.scoring.helpers import run_one

from evalfleet.scoring.compat.generation import InvalidReferences, parse_references
from evalfleet.scoring.errors import FieldError
from evalfleet.scoring.validators import bleu_score

PATH = "evaluation_spec.validators[0].config"
CAT = "the cat sat on the mat"


@pytest.mark.parametrize(("actual", "expected", "config", "score"), [
    (CAT, CAT, None, 1.0),
    ("", "", None, 1.0),
    ("", "   ", None, 1.0),
    ("", '["", ""]', None, 0.0),
    ("", "x", None, 0.0),
    ("cat", "cat", None, 1.0),
    ("the cat", "the cat sat", None, math.exp(1 - 3 / 2)),
    ("the the the", "the cat", None, 1 / 3 * 0.0),
    ("a b c d", "a b x y", None, 0.0),
    ("a b c d", "a b x y", {"smoothing": "method1"},
     (2 / 4 * 1 / 3 * 1 / 3 * 1 / 2) ** 0.25),
    ("a b c d", "a b c x", {"max_ngram": 2}, (3 / 4 * 2 / 3) ** 0.5),
    ("The Cat", "the cat", {"case_insensitive": True}, 1.0),
    ("the cat", '["the cat sat on", "the cat"]', None, 1.0),
    ("a b c", '["a b c d e", "a b c d"]', None, math.exp(1 - 4 / 3)),
])
def test_score(actual: str, expected: str, config: Any, score: float) -> None:
    """Orders 1..min(max_ngram, len); clipped precision; method1 1/(total+1); closest BP."""
    result = run_one("bleu_score", actual, expected, config)

    assert result.normalized_score == pytest.approx(score)


def test_brevity_penalty_ties_prefer_shorter() -> None:
    """Equally close reference lengths resolve to the shorter one."""
    assert bleu_score.closest_length(4, [6, 2, 5, 3]) == 3


def test_graded_fail_keeps_score() -> None:
    """Below the (clamped) threshold the verdict fails but the score is kept."""
    result = run_one("bleu_score", "the cat", "the cat sat", {"threshold": 7})

    assert (result.verdict, result.normalized_score) == ("fail",
                                                         pytest.approx(math.exp(-0.5)))


@pytest.mark.parametrize(("expected", "references"), [
    ("", [""]),
    ("plain text", ["plain text"]),
    ('["a", "b"]', ["a", "b"]),
    ('  ["a", null] ', ["a", ""]),
    ("[not json", ["[not json"]),
    ('["a"] trailing', ['["a"] trailing']),
    ("[NaN]", ["[NaN]"]),
])
def test_reference_parsing(expected: str, references: list[str]) -> None:
    """Blank ⇒ one empty; JSON string array ⇒ several; '[' but not JSON ⇒ literal."""
    assert parse_references(expected, normalize=False, case_insensitive=False) == references


@pytest.mark.parametrize("expected", ["[1, 2]", '["a", 1]', "[]", '[{"a": 1}]'])
def test_bad_reference_arrays_are_pack_errors(expected: str) -> None:
    """A JSON array of non-strings (or no references) is an error, classed pack_error."""
    with pytest.raises(InvalidReferences):
        parse_references(expected, normalize=False, case_insensitive=False)
    result = run_one("bleu_score", "a", expected)
    assert (result.state, result.outcome_class) == ("error", "pack_error")


def test_sacrebleu_implementation() -> None:
    """implementation: sacrebleu gives sacrebleu.sentence_bleu / 100."""
    hyp, ref = "the cat is on the mat today", "the cat sat on the mat"
    result = run_one("bleu_score", hyp, ref, {"implementation": "sacrebleu"})

    assert result.normalized_score == pytest.approx(
        sacrebleu.sentence_bleu(hyp, [ref]).score / 100)


@pytest.mark.parametrize(("config", "errors"), [
    ({"max_ngram": 2, "smoothing": "method1", "threshold": 0.1}, []),
    ({"max_ngram": 0}, [FieldError(f"{PATH}.max_ngram", "must be greater than 0")]),
    ({"smoothing": "exp"}, [FieldError(f"{PATH}.smoothing", 'must be "none" or "method1"')]),
    ({"threshold": 2}, [FieldError(f"{PATH}.threshold", "must be between 0 and 1")]),
    ({"implementation": "nltk"},
     [FieldError(f"{PATH}.implementation", 'must be "agentclash" or "sacrebleu"')]),
])
def test_config_rules(config: dict[str, Any], errors: list[FieldError]) -> None:
    """Load time: max_ngram > 0, smoothing none|method1, threshold, implementation."""
    model, problem = bleu_score.KIND.decode_config(config)

    assert (problem, bleu_score.config_rules(model, PATH)) == (None, errors)


@given(st.text(), st.text(), st.integers(-2, 6), st.sampled_from(["none", "method1", ""]),
       st.sampled_from(["agentclash", "sacrebleu"]))
def test_never_raises(actual: str, expected: str, max_ngram: int, smoothing: str,
                      implementation: str) -> None:
    """Arbitrary strings and configs give a result, never an exception."""
    config = {"max_ngram": max_ngram, "smoothing": smoothing, "implementation": implementation}

    assert run_one("bleu_score", actual, expected, config).state in {"available", "error"}
