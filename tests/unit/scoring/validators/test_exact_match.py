"""exact_match (docs/scoring.md §5.1): byte-for-byte equality; no trimming, folding or
normalization."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from unit.scoring.helpers import completed, run_one

CASES = [
    ("42", "42", "pass"),
    ("", "", "pass"),
    ("42\n", "42", "fail"),          # no trimming
    (" 42", "42", "fail"),
    ("Paris", "paris", "fail"),      # no case folding
    ("ﬁ", "fi", "fail"),             # no NFKC
    ("e\u0301", "é", "fail"),        # no NFC either: code points must match
    ("naïve 日本", "naïve 日本", "pass"),
]


@pytest.mark.parametrize(("actual", "expected", "verdict"), CASES)
def test_exact_equality(actual: str, expected: str, verdict: str) -> None:
    """Pass only for identical text; score 1 or 0."""
    result = run_one("exact_match", actual, expected)

    assert (verdict, 1.0 if verdict == "pass" else 0.0) == (result.verdict,
                                                            result.normalized_score)


def test_numbers_in_case_data_are_stringified_the_go_way() -> None:
    """A YAML expectation 1000000 resolves to "1e+06", so "1000000" fails (AgentClash trap)."""
    cases = [{"case_key": "c", "payload": {"q": 1},
              "expectations": [{"key": "answer", "value": 1000000}]}]
    from unit.scoring.helpers import evidence_of, spec_with

    from evalfleet.scoring.run.validator_run import run_validator

    spec = spec_with({"key": "v", "type": "exact_match", "target": "final_output",
                      "expected_from": "case.expectations.answer"})
    result = run_validator(spec.validators[0], spec, evidence_of([completed("1000000")], cases))

    assert (result.verdict, result.expected_value) == ("fail", "1e+06")


def test_config_is_ignored() -> None:
    """Whatever config is given, it is never read (no error, same verdict)."""
    assert run_one("exact_match", "a", "a", {"case_insensitive": True}).verdict == "pass"


def test_missing_final_output_is_unavailable() -> None:
    """No final output: unavailable with the evidence's reason, no verdict, no score."""
    result = run_one("exact_match", None, "x", events=[completed()])

    assert (result.state, result.verdict, result.normalized_score) == ("unavailable", "", None)
    assert result.reason == "final output evidence is unavailable"


@given(st.text(), st.text())
def test_never_raises(actual: str, expected: str) -> None:
    """Arbitrary text decides pass/fail and never raises."""
    assert run_one("exact_match", actual, expected).verdict in {"pass", "fail"}
