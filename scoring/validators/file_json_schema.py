"""file_json_schema: a captured file is one JSON value valid against ``config.schema``
(docs/scoring.md §5.17).

The config ``{schema: <JSON Schema>}`` is lenient (Go's plain decode: unknown keys ignored)
and never checked at load time: a missing config or schema, or a config that does not
decode, is a run-time error classed ``pack_error``. Otherwise exactly json_schema with the
file content as the document.
"""

from __future__ import annotations

from ..compat import lenient
from .base import CheckInput, Kind, Outcome
from .schemas import check_document

FIELDS: lenient.Fields = {"schema": ("rawmessage", None)}


def check(given: CheckInput) -> Outcome:
    if given.decl.config is None:
        return Outcome.error("file_json_schema config is required")
    config = lenient.decode(given.decl.config, "fileJSONSchemaConfig", FIELDS)
    if config.error is not None:
        return Outcome.error(f"invalid file_json_schema config: {config.error}")
    schema = config.values["schema"]
    if schema is None:
        return Outcome.error("file_json_schema config.schema is required")
    return check_document(given.actual or "", None if schema is lenient.NULL else schema)


KIND = Kind("file_json_schema", check, strictness="lenient", expected="ignored",
            needs_file_target=True)
