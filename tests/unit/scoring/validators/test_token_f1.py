"""token_f1 (docs/scoring.md §5.10): multiset token overlap F1 with the flag-built pipeline."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from unit.scoring.helpers import run_one

from evalfleet.scoring.errors import FieldError
from evalfleet.scoring.validators import token_f1

PATH = "evaluation_spec.validators[0].config"


@pytest.mark.parametrize(("config", "pipeline"), [
    ({}, []),
    ({"normalize": True}, ["trim", "lowercase", "collapse_whitespace",
                           "collapse_whitespace", "trim"]),
    ({"remove_punctuation": True}, ["strip_punctuation", "collapse_whitespace", "trim"]),
    ({"normalize": True, "remove_articles": True, "remove_punctuation": True},
     ["trim", "lowercase", "collapse_whitespace", "strip_punctuation", "remove_articles",
      "collapse_whitespace", "trim"]),
])
def test_pipeline_construction(config: dict[str, Any], pipeline: list[str]) -> None:
    """The pipeline is built from the flags, with collapse+trim only if anything was added."""
    model, _ = token_f1.KIND.decode_config(config)

    assert pipeline == token_f1.pipeline_of(model)


@pytest.mark.parametrize(("actual", "expected", "config", "score", "verdict"), [
    ("the cat sat", "the cat sat", None, 1.0, "pass"),
    ("", "", None, 1.0, "pass"),
    ("", "x", None, 0.0, "fail"),
    ("x", "", None, 0.0, "fail"),
    ("a a a", "a", None, 0.5, "pass"),
    ("cat dog", "fish bird", None, 0.0, "fail"),
    ("The Cat", "the cat", None, 0.0, "fail"),
    ("The Cat", "the cat", {"normalize": True}, 1.0, "pass"),
    ("The cat!", "a cat", {"normalize": True, "remove_articles": True,
                           "remove_punctuation": True}, 1.0, "pass"),
    ("cat\u3000dog", "cat dog", None, 1.0, "pass"),
    ("the cat sat on", "the cat", {"threshold": 0.9}, 2 / 3, "fail"),
])
def test_score(actual: str, expected: str, config: Any, score: float, verdict: str) -> None:
    """F1 = 2PR/(P+R) over multiset overlap; score kept on fail."""
    result = run_one("token_f1", actual, expected, config)

    assert (pytest.approx(score), verdict) == (result.normalized_score, result.verdict)


@pytest.mark.parametrize(("config", "errors"), [
    ({"threshold": 0.5}, []),
    ({"threshold": 1.01}, [FieldError(f"{PATH}.threshold", "must be between 0 and 1")]),
])
def test_config_rules(config: dict[str, Any], errors: list[FieldError]) -> None:
    """Load time: threshold in [0, 1]."""
    model, problem = token_f1.KIND.decode_config(config)

    assert (None, errors) == (problem, token_f1.config_rules(model, PATH))


@given(st.text(), st.text(), st.booleans(), st.booleans(), st.booleans())
def test_never_raises(actual: str, expected: str, normalize: bool, articles: bool,
                      punctuation: bool) -> None:
    """Arbitrary strings and flags give a score in [0, 1], never an exception."""
    config = {"normalize": normalize, "remove_articles": articles,
              "remove_punctuation": punctuation}
    result = run_one("token_f1", actual, expected, config)

    assert result.normalized_score is not None and 0 <= result.normalized_score <= 1
