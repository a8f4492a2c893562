"""Validator kinds: one module per type, one line per type in :data:`VALIDATORS`.

The table is explicit (no discovery by import side effects); ``tests`` assert that its
keys are exactly :data:`VALIDATOR_TYPES`, AgentClash's 21 types.
"""

from __future__ import annotations

from typing import Final

from . import (
    bleu_score,
    boolean_assert,
    chrf_score,
    code_execution,
    contains,
    directory_structure,
    exact_match,
    file_content_match,
    file_exists,
    file_json_schema,
    fuzzy_match,
    json_path_match,
    json_schema,
    math_equivalence,
    normalized_match,
    numeric_match,
    postcondition,
    regex_match,
    rouge_score,
    token_f1,
    tool_call_assertion,
)
from .base import Kind

VALIDATOR_TYPES: Final = (
    "exact_match", "contains", "regex_match", "boolean_assert", "json_schema",
    "json_path_match", "fuzzy_match", "numeric_match", "normalized_match", "token_f1",
    "math_equivalence", "bleu_score", "rouge_score", "chrf_score", "file_exists",
    "file_content_match", "file_json_schema", "directory_structure", "code_execution",
    "tool_call_assertion", "postcondition",
)

VALIDATORS: Final[dict[str, Kind]] = {
    "bleu_score": bleu_score.KIND,
    "boolean_assert": boolean_assert.KIND,
    "chrf_score": chrf_score.KIND,
    "code_execution": code_execution.KIND,
    "contains": contains.KIND,
    "directory_structure": directory_structure.KIND,
    "exact_match": exact_match.KIND,
    "file_content_match": file_content_match.KIND,
    "file_exists": file_exists.KIND,
    "file_json_schema": file_json_schema.KIND,
    "fuzzy_match": fuzzy_match.KIND,
    "json_path_match": json_path_match.KIND,
    "json_schema": json_schema.KIND,
    "math_equivalence": math_equivalence.KIND,
    "normalized_match": normalized_match.KIND,
    "numeric_match": numeric_match.KIND,
    "postcondition": postcondition.KIND,
    "regex_match": regex_match.KIND,
    "rouge_score": rouge_score.KIND,
    "token_f1": token_f1.KIND,
    "tool_call_assertion": tool_call_assertion.KIND,
}


def lookup(type_name: str) -> Kind | None:
    """The kind registered for ``type_name``, or None if the type is not supported."""
    return VALIDATORS.get(type_name)
