"""file_content_match: the captured file's text against the expected (docs/scoring.md §5.16).

Config (lenient): ``{match_mode: "contains" (default) | "exact" | "regex" | "not_contains" |
"json_equal", ignore_whitespace: bool = false}``; unknown keys are ignored, so the shipped
packs' ``{mode: contains}`` silently means the default. ``ignore_whitespace`` collapses runs
of ASCII whitespace in both sides (no trim) for exact/contains/not_contains only. ``regex``
searches the raw file with the raw expected as an RE2 pattern. ``json_equal`` decodes both
sides as Go does (numbers as float64, key order irrelevant); a parse failure is an error.
"""

from __future__ import annotations

from collections.abc import Callable

from ..compat import gojson, lenient
from ..compat.patterns import PatternError, search
from ..compat.textnorm import collapse_ascii_whitespace, go_quote
from .base import CheckInput, Kind, Outcome

FIELDS: lenient.Fields = {"match_mode": ("string", "contains"),
                          "ignore_whitespace": ("bool", False)}


def _exact(actual: str, expected: str) -> Outcome:
    return Outcome.check(actual == expected, "", "file content does not match exactly")


def _contains(actual: str, expected: str) -> Outcome:
    return Outcome.check(expected in actual, "", "file content does not contain expected string")


def _not_contains(actual: str, expected: str) -> Outcome:
    return Outcome.check(expected not in actual, "", "file content contains forbidden string")


def _regex(actual: str, expected: str) -> Outcome:
    try:
        matched = search(expected, actual)
    except PatternError as err:
        return Outcome.error(f"invalid regex pattern: {err}")
    return Outcome.check(matched, "", "file content does not match regex pattern")


def _json_equal(actual: str, expected: str) -> Outcome:
    documents = []
    for side, text in (("actual", actual), ("expected", expected)):
        try:
            documents.append(gojson.unmarshal(text))
        except gojson.UnmarshalError as err:
            return Outcome.error(f"parse {side} as JSON: {err}")
    return Outcome.check(gojson.equal(*documents), "",
                         "file JSON content is not structurally equal")


_TEXT_MODES: dict[str, Callable[[str, str], Outcome]] = {
    "exact": _exact,
    "contains": _contains,
    "not_contains": _not_contains,
}
_RAW_MODES: dict[str, Callable[[str, str], Outcome]] = {
    "regex": _regex,
    "json_equal": _json_equal,
}


def check(given: CheckInput) -> Outcome:
    config = lenient.decode(given.decl.config, "fileContentMatchConfig", FIELDS)
    if config.error is not None:
        return Outcome.error(f"invalid file_content_match config: {config.error}")
    mode = str(config.values["match_mode"])
    actual, expected = given.actual or "", given.expected or ""
    if mode in _RAW_MODES:
        return _RAW_MODES[mode](actual, expected)
    compare = _TEXT_MODES.get(mode)
    if compare is None:
        return Outcome.error(f"unsupported match_mode {go_quote(mode)}")
    if config.values["ignore_whitespace"]:
        actual, expected = collapse_ascii_whitespace(actual), collapse_ascii_whitespace(expected)
    return compare(actual, expected)


KIND = Kind("file_content_match", check, strictness="lenient", needs_file_target=True)
