"""file_exists: whether the captured file (or listing) exists (docs/scoring.md §5.15).

Config (lenient): ``{must_exist: bool = true}``. A missing target is the signal itself, not
missing evidence: whether the capture says ``exists: false`` or there is no capture event
at all, the result is available and passes iff ``must_exist`` is false. AgentClash ignores
a malformed config on that path (``must_exist`` keeps its default unless it decoded); when
the file exists, a malformed config is an error "invalid file_exists config: ...".
"""

from __future__ import annotations

from ..compat import lenient
from .base import CheckInput, Kind, Outcome

FIELDS: lenient.Fields = {"must_exist": ("bool", True)}


def check(given: CheckInput) -> Outcome:
    config = lenient.decode(given.decl.config, "fileExistsConfig", FIELDS)
    must_exist = bool(config.values["must_exist"])
    if not given.target.available:
        return Outcome.check(not must_exist, "file correctly does not exist",
                             "file does not exist")
    if config.error is not None:
        return Outcome.error(f"invalid file_exists config: {config.error}")
    return Outcome.check(must_exist, "", "file exists but should not")


KIND = Kind("file_exists", check, strictness="lenient", expected="ignored",
            needs_file_target=True, handles_missing_target=True)
