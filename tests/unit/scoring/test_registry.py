"""The validator registry is an explicit table that matches AgentClash's 21 types."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalfleet.scoring.validators import VALIDATOR_TYPES, VALIDATORS

TESTS = Path(__file__).parent / "validators"
STRICT = {"fuzzy_match", "numeric_match", "normalized_match", "token_f1", "math_equivalence",
          "bleu_score", "rouge_score", "chrf_score", "code_execution", "tool_call_assertion",
          "postcondition"}
LENIENT = {"file_exists", "file_content_match", "file_json_schema", "directory_structure"}


def test_the_table_holds_exactly_the_21_types() -> None:
    """Every AgentClash validator type is registered, and nothing else."""
    assert len(VALIDATOR_TYPES) == 21
    assert set(VALIDATORS) == set(VALIDATOR_TYPES)


@pytest.mark.parametrize("name", VALIDATOR_TYPES)
def test_each_kind_is_named_for_its_key_and_has_tests(name: str) -> None:
    """A kind's name is its registry key, and it has its own table-driven test module."""
    assert VALIDATORS[name].name == name
    assert (TESTS / f"test_{name}.py").is_file()


@pytest.mark.parametrize("name", VALIDATOR_TYPES)
def test_config_strictness_follows_agentclash(name: str) -> None:
    """Strict configs reject unknown keys at load; lenient ones are never validated at load;
    the rest never read their config (docs/scoring.md §2.1)."""
    kind = VALIDATORS[name]
    expected = "strict" if name in STRICT else "lenient" if name in LENIENT else "ignored"

    assert kind.strictness == expected
