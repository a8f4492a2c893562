"""json_schema: the actual is one JSON value valid against the expected schema (docs/scoring.md
§5.5).

Config ignored. A malformed actual is an ``evaluator_error`` ("parse actual JSON document");
a schema that does not decode or names another draft is a ``pack_error`` ("parse JSON
schema"), and so is one jsonschema-go's ``Resolve`` refuses ("resolve JSON schema"). The
rules of decoding, drafts and numbers are in :mod:`scoring.validators.schemas`.
"""

from __future__ import annotations

from .base import CheckInput, Kind, Outcome
from .schemas import SchemaProblem, check_document, parse_schema_text


def check(given: CheckInput) -> Outcome:
    try:
        schema = parse_schema_text(given.expected or "")
    except SchemaProblem as err:
        return _schema_error_after_actual(given.actual or "", err)
    return check_document(given.actual or "", schema)


def _schema_error_after_actual(actual: str, problem: SchemaProblem) -> Outcome:
    """AgentClash parses the actual first: a bad actual wins over a bad schema."""
    outcome = check_document(actual, True)
    if outcome.state == "error":
        return outcome
    return Outcome.error(f"parse JSON schema: {problem}", error=str(problem))


KIND = Kind("json_schema", check)
