"""normalized_match (docs/scoring.md §5.9) and the shared normalization steps of
scoring.compat.textnorm."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from unit.scoring.helpers import run_one

from evalfleet.scoring.compat.textnorm import (
    STEPS,
    apply_pipeline,
    collapse_ascii_whitespace,
    split_words,
    trim,
)
from evalfleet.scoring.errors import FieldError
from evalfleet.scoring.validators import normalized_match

PATH = "evaluation_spec.validators[0].config"


@pytest.mark.parametrize(("step", "text", "result"), [
    ("trim", "\u3000\u00a0 x \u2028", "x"),
    ("trim", "\x1cx\x1f", "\x1cx\x1f"),
    ("lowercase", "Straße ΣΑΣ", "strasse σασ"),
    ("collapse_whitespace", " a \t\n\r\f b ", " a b "),
    ("collapse_whitespace", "a\v\u00a0 b", "a\v\u00a0 b"),
    ("strip_punctuation", "It's $5 + 3! «ok»", "Its 5  3 ok"),
    ("strip_currency", "$5 USD, €3 eur, U$SD", "5 , 3 eur, USD"),
    ("strip_formatting", "f(1, [2])", "f1 2"),
    ("normalize_unicode", "ﬁ ① Ａ", "fi 1 A"),
    ("remove_articles", "the cat ate an apple", "  cat ate   apple"),
    ("remove_articles", "The theme a-b", "The theme  -b"),
    ("sort_words", " b  a\u3000c ", "a b c"),
    ("sort_lines", "b\r\na\n\nc", "\na\nb\nc"),
])
def test_steps(step: str, text: str, result: str) -> None:
    """Each step follows its Unicode rule exactly."""
    assert result == STEPS[step](text)


@pytest.mark.parametrize(("actual", "expected", "config", "verdict"), [
    ("  Hello   WORLD ", "hello world", None, "pass"),
    ("STRASSE", "straße", None, "pass"),
    ("Hello, World!", "hello world", {"pipeline": ["lowercase", "strip_punctuation"]}, "pass"),
    ("$1,000", "1000", {"normalizations": ["strip_currency", "strip_formatting"]}, "pass"),
    ("b a", "a b", {"pipeline": ["sort_words"]}, "pass"),
    ("The cat", "cat", {"pipeline": ["remove_articles", "trim"]}, "fail"),
    ("The cat", "cat", {"pipeline": ["lowercase", "remove_articles", "trim"]}, "pass"),
    ("Hello", "hello", {"pipeline": ["trim"]}, "fail"),
    ("x  y", "x y", {"pipeline": []}, "pass"),
    ("ﬁ", "fi", {"pipeline": ["normalize_unicode"]}, "pass"),
])
def test_decision(actual: str, expected: str, config: Any, verdict: str) -> None:
    """Both sides go through the pipeline (default trim, lowercase, collapse), then equality."""
    result = run_one("normalized_match", actual, expected, config)

    assert verdict == result.verdict


@pytest.mark.parametrize(("config", "outcome_class", "reason"), [
    # Not one of AgentClash's pack-author prefixes, so an evaluator_error there.
    ({"pipeline": ["trim", "bogus"]}, "evaluator_error",
     'normalize actual value: unknown normalization step "bogus"'),
    ({"pipeline": ["trim"], "normalizations": ["trim"]}, "pack_error",
     "parse normalized_match config: cannot mix pipeline with normalizations"),
])
def test_run_time_errors(config: dict[str, Any], outcome_class: str, reason: str) -> None:
    """Unknown steps and mixed keys are errors at run time, classed as AgentClash does."""
    result = run_one("normalized_match", "a", "a", config)

    assert ("error", outcome_class, reason) == (result.state, result.outcome_class,
                                                result.reason)


@pytest.mark.parametrize(("config", "errors"), [
    ({"pipeline": ["trim", "sort_lines"]}, []),
    ({"pipeline": ["trim", "bogus_step"]},
     [FieldError(f"{PATH}.pipeline[1]", '"bogus_step" is not a supported normalization step')]),
    ({"normalizations": ["x"]},
     [FieldError(f"{PATH}.pipeline[0]", '"x" is not a supported normalization step')]),
    ({"pipeline": ["trim"], "normalizations": ["trim"]},
     [FieldError(PATH, "cannot mix pipeline with normalizations")]),
])
def test_config_rules(config: dict[str, Any], errors: list[FieldError]) -> None:
    """Load time: unknown steps (at pipeline[i]) and mixing the two keys are rejected."""
    model, problem = normalized_match.KIND.decode_config(config)

    assert (None, errors) == (problem, normalized_match.config_rules(model, PATH))


def test_shared_helpers() -> None:
    """Go whitespace: \\x1c–\\x1f are not spaces; collapse is ASCII-only; unknown step raises."""
    assert split_words("a\x1cb\u2003c") == ["a\x1cb", "c"]
    assert collapse_ascii_whitespace("a \t b") == "a b"
    assert trim("\u2029x\u0085") == "x"
    with pytest.raises(ValueError, match="unknown normalization step"):
        apply_pipeline("x", ["nope"])


@given(st.text(), st.text(), st.lists(st.sampled_from([*STEPS, "bogus"]), max_size=5))
def test_never_raises(actual: str, expected: str, pipeline: list[str]) -> None:
    """Arbitrary strings and pipelines give a result, never an exception."""
    result = run_one("normalized_match", actual, expected, {"pipeline": pipeline})

    assert result.state in {"available", "error"}
