"""chrf_score (docs/scoring.md §5.14): character n-gram F-beta, whitespace removed, best over
references."""

from __future__ import annotations

from typing import Any

import pytest
import sacrebleu
from hypothesis import given
from hypothesis import strategies as st
from unit.scoring.helpers import run_one

from evalfleet.scoring.errors import FieldError
from evalfleet.scoring.validators import chrf_score

PATH = "evaluation_spec.validators[0].config"


@pytest.mark.parametrize(("actual", "expected", "config", "score"), [
    ("the cat", "the cat", None, 1.0),
    ("thecat", "the  cat\u3000", None, 1.0),
    ("", "", None, 1.0),
    ("", "x", None, 0.0),
    ("x", "", None, 0.0),
    ("ab", "abc", {"beta": 1}, 2 * 1 * (2 / 3 + 1 / 2) / 2 / (1 + (2 / 3 + 1 / 2) / 2)),
    ("abc", "abd", {"char_order": 1}, 2 / 3),
    ("ab", "ba", None, (1 + 4) * 0.5 * 0.5 / (4 * 0.5 + 0.5)),
    ("x", '["y", "x"]', None, 1.0),
    ("ABC", "abc", {"case_insensitive": True}, 1.0),
])
def test_score(actual: str, expected: str, config: Any, score: float) -> None:
    """Per reference: orders up to min(char_order, |c|, |r|), mean P/R, then F_β."""
    result = run_one("chrf_score", actual, expected, config)

    assert result.normalized_score == pytest.approx(score)


def test_graded_fail_keeps_score() -> None:
    """A failing chrF keeps its continuous score."""
    result = run_one("chrf_score", "abc", "abd", {"char_order": 1, "threshold": 0.9})

    assert (result.verdict, result.normalized_score) == ("fail", pytest.approx(2 / 3))


def test_sacrebleu_implementation() -> None:
    """implementation: sacrebleu gives sacrebleu.sentence_chrf / 100."""
    hyp, ref = "the cat is on the mat", "the cat sat on the mat"
    result = run_one("chrf_score", hyp, ref, {"implementation": "sacrebleu"})

    assert result.normalized_score == pytest.approx(
        sacrebleu.sentence_chrf(hyp, [ref]).score / 100)


@pytest.mark.parametrize(("config", "errors"), [
    ({"char_order": 4, "beta": 1}, []),
    ({"char_order": 0}, [FieldError(f"{PATH}.char_order", "must be greater than 0")]),
    ({"beta": -1}, [FieldError(f"{PATH}.beta", "must be greater than 0")]),
    ({"threshold": 1.5}, [FieldError(f"{PATH}.threshold", "must be between 0 and 1")]),
])
def test_config_rules(config: dict[str, Any], errors: list[FieldError]) -> None:
    """Load time: char_order > 0, beta > 0, threshold in [0, 1]."""
    model, problem = chrf_score.KIND.decode_config(config)

    assert (problem, chrf_score.config_rules(model, PATH)) == (None, errors)


@given(st.text(), st.text(), st.integers(-2, 8), st.sampled_from(["agentclash", "sacrebleu"]))
def test_never_raises(actual: str, expected: str, char_order: int, implementation: str) -> None:
    """Arbitrary strings and configs give a result, never an exception."""
    config = {"char_order": char_order, "implementation": implementation}

    assert run_one("chrf_score", actual, expected, config).state in {"available", "error"}
