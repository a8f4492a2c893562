"""Validator kinds: one module per type, one line per type in :data:`VALIDATORS`.

The table is explicit (no discovery by import side effects); ``tests`` assert that its
keys are exactly :data:`VALIDATOR_TYPES`, AgentClash's 21 types.
"""

from __future__ import annotations

from typing import Final

from . import contains, exact_match, regex_match
from .base import Kind

VALIDATOR_TYPES: Final = (
    "exact_match", "contains", "regex_match", "boolean_assert", "json_schema",
    "json_path_match", "fuzzy_match", "numeric_match", "normalized_match", "token_f1",
    "math_equivalence", "bleu_score", "rouge_score", "chrf_score", "file_exists",
    "file_content_match", "file_json_schema", "directory_structure", "code_execution",
    "tool_call_assertion", "postcondition",
)

VALIDATORS: Final[dict[str, Kind]] = {
    "contains": contains.KIND,
    "exact_match": exact_match.KIND,
    "regex_match": regex_match.KIND,
}


def lookup(type_name: str) -> Kind | None:
    """The kind registered for ``type_name``, or None if the type is not supported."""
    return VALIDATORS.get(type_name)
