"""rouge_score (docs/scoring.md §5.13): ROUGE-1/2/L F-beta, best over references."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from unit.scoring.helpers import run_one

from evalfleet.scoring.errors import FieldError
from evalfleet.scoring.validators import rouge_score

PATH = "evaluation_spec.validators[0].config"


@pytest.mark.parametrize(("actual", "expected", "config", "score"), [
    ("the cat sat", "the cat sat", None, 1.0),
    ("the cat sat", "the cat sat on mat", {"variant": "rouge-1"}, 2 * 1 * 0.6 / 1.6),
    ("the cat sat", "the cat sat on mat", {"variant": "rouge-2"}, 2 * 1 * 0.5 / 1.5),
    ("a b c d", "a c b d", None, 0.75),
    ("a b c d", "a c b d", {"variant": "rouge-2"}, 0.0),
    ("", "", None, 0.0),
    ("x", "", {"variant": "rouge-1"}, 0.0),
    ("a", "a b", {"variant": "rouge-2"}, 0.0),
    ("a b", "a b c d", {"variant": "rouge-1", "beta": 2}, 5 * 1 * 0.5 / (4 * 1 + 0.5)),
    ("the cat", '["dog", "the cat"]', None, 1.0),
    ("The Cat", "the cat", {"case_insensitive": True}, 1.0),
    ("a a", "a", {"variant": "rouge-1"}, 2 * 0.5 * 1 / 1.5),
])
def test_score(actual: str, expected: str, config: Any, score: float) -> None:
    """Clipped n-gram overlap or LCS; F_β; multi-reference max."""
    result = run_one("rouge_score", actual, expected, config)

    assert result.normalized_score == pytest.approx(score)


def test_graded_fail_keeps_score() -> None:
    """A failing ROUGE keeps its continuous score."""
    result = run_one("rouge_score", "a b c d", "a c b d", {"threshold": 0.9})

    assert (result.verdict, result.normalized_score) == ("fail", 0.75)


@pytest.mark.parametrize(("config", "errors"), [
    ({"variant": "rouge-2", "beta": 0.5}, []),
    ({"variant": "rouge-3"},
     [FieldError(f"{PATH}.variant", 'must be "rouge-1", "rouge-2", or "rouge-l"')]),
    ({"beta": 0}, [FieldError(f"{PATH}.beta", "must be greater than 0")]),
    ({"threshold": -1}, [FieldError(f"{PATH}.threshold", "must be between 0 and 1")]),
])
def test_config_rules(config: dict[str, Any], errors: list[FieldError]) -> None:
    """Load time: variant name, beta > 0, threshold in [0, 1]."""
    model, problem = rouge_score.KIND.decode_config(config)

    assert (problem, rouge_score.config_rules(model, PATH)) == (None, errors)


@given(st.text(), st.text(), st.sampled_from(["rouge-1", "rouge-2", "rouge-l", "x"]),
       st.floats(-3, 3))
def test_never_raises(actual: str, expected: str, variant: str, beta: float) -> None:
    """Arbitrary strings and configs give a result, never an exception."""
    config = {"variant": variant, "beta": beta}

    assert run_one("rouge_score", actual, expected, config).state in {"available", "error"}
