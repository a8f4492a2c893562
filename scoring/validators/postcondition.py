"""postcondition: a condition on a captured file after the run (docs/scoring.md §5.21).

Config (strict, required): ``{condition, value?, json_path?}``; expected_from is omitted
and the target is ``file:<key>``. Conditions:

* ``exists`` / ``not_exists`` — value and json_path must be absent;
* ``contains`` / ``not_contains`` — value is a JSON string, substring test on the file text;
* ``regex_match`` — value is an RE2 pattern, unanchored search;
* ``equals`` — a string value is compared exactly with the file text; any other value is
  compared with the file parsed as JSON, by json_path_match's equality;
* ``json_path_match`` — json_path and value required: json_path_match with ``equals``.

Missing file: no capture event at all (the reason says "unavailable") ⇒ unavailable; a
capture with ``exists: false`` ⇒ ``exists`` fails, ``not_exists`` passes, any other
condition is unavailable. A file that is not JSON for a JSON condition ⇒ error.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..compat.jsoncompare import values_equal
from ..compat.jsondoc import DocumentError, parse_document, to_exact, to_plain
from ..compat.patterns import PatternError, compile_pattern, search
from ..compat.textform import first_non_empty
from ..errors import FieldError
from ..record.references import Resolution
from .base import CheckInput, Kind, Outcome, StrictConfig
from .json_path_match import Expectation, evaluate

CONDITIONS = ("exists", "not_exists", "contains", "not_contains", "regex_match",
              "json_path_match", "equals")


class PostconditionConfig(StrictConfig):
    """``{condition, value?, json_path?}``."""

    condition: str = ""
    value: Any = None
    """Raw JSON; its required type depends on the condition."""
    json_path: str | None = None
    """Only for ``json_path_match``."""


def config_rules(config: PostconditionConfig, path: str) -> list[FieldError]:
    """``validatePostconditionConfig``: the fields each condition needs or forbids."""
    condition = config.condition.strip()
    if not condition:
        return [FieldError(f"{path}.condition", "is required")]
    if condition not in CONDITIONS:
        return [FieldError(f"{path}.condition", "must be one of " + ", ".join(CONDITIONS))]
    found = _VALUE_RULES[condition](config, path)
    json_path = (config.json_path or "").strip()
    if condition == "json_path_match" and not json_path:
        found.insert(0, FieldError(f"{path}.json_path", "is required"))
    omit_path = condition != "json_path_match" and not (condition == "regex_match" and found
                                                         and found[0].message.endswith("pattern"))
    if omit_path and json_path:
        found.append(FieldError(f"{path}.json_path", f"must be omitted for {condition}"))
    return found


def value_configured(config: PostconditionConfig) -> bool:
    """Whether ``value`` was written (JSON ``null`` counts: it is raw JSON in AgentClash)."""
    return "value" in config.model_fields_set


def _omitted(config: PostconditionConfig, path: str) -> list[FieldError]:
    if value_configured(config):
        return [FieldError(f"{path}.value", f"must be omitted for {config.condition.strip()}")]
    return []


def _text_value(config: PostconditionConfig) -> str | None:
    """The value as a Go string (``null`` is ``""``), or None when it cannot be one."""
    if not value_configured(config):
        return None
    return "" if config.value is None else config.value if isinstance(config.value, str) \
        else None


def _string(config: PostconditionConfig, path: str) -> list[FieldError]:
    if _text_value(config) is None:
        return [FieldError(f"{path}.value", "must be a string")]
    return []


def _pattern(config: PostconditionConfig, path: str) -> list[FieldError]:
    pattern = _text_value(config)
    if pattern is None:
        return [FieldError(f"{path}.value", "must be a string regex pattern")]
    try:
        compile_pattern(pattern)
    except PatternError as err:
        return [FieldError(f"{path}.value", f"must be a valid regex: {err}")]
    return []


def _required(config: PostconditionConfig, path: str) -> list[FieldError]:
    return [] if value_configured(config) else [FieldError(f"{path}.value", "is required")]


_VALUE_RULES: dict[str, Callable[[PostconditionConfig, str], list[FieldError]]] = {
    "exists": _omitted, "not_exists": _omitted, "contains": _string, "not_contains": _string,
    "regex_match": _pattern, "json_path_match": _required, "equals": _required,
}


def check(given: CheckInput) -> Outcome:
    if given.decl.config is None:
        return Outcome.broken("parse postcondition config: EOF")
    config: PostconditionConfig = given.config
    problems = config_rules(config, "config")
    if problems:
        detail = "; ".join(f"{p.field} {p.message}" for p in problems)
        return Outcome.broken(f"invalid postcondition config: {detail}")
    condition = config.condition.strip()
    if not given.target.available:
        return _missing(condition, given.target)
    return _CONDITIONS[condition](config, given.actual or "")


def _missing(condition: str, target: Resolution) -> Outcome:
    """No file: unavailable, unless a capture said it does not exist and the condition is
    about existence (``postconditionMissingEvidenceUnavailable``)."""
    if "unavailable" in target.reason or condition not in ("exists", "not_exists"):
        reason = first_non_empty(target.reason, "postcondition target evidence is unavailable")
        return Outcome.unavailable(reason, condition=condition)
    return _existence(condition, exists=False)


def _existence(condition: str, *, exists: bool) -> Outcome:
    present, absent = "postcondition target exists", "postcondition target does not exist"
    if condition == "exists":
        return Outcome.check(exists, present, absent)
    return Outcome.check(not exists, absent, present)


def _exists(config: PostconditionConfig, text: str) -> Outcome:
    return _existence(config.condition.strip(), exists=True)


def _contains(config: PostconditionConfig, text: str) -> Outcome:
    expected = _text_value(config) or ""
    if config.condition.strip() == "contains":
        return Outcome.check(expected in text, "target contains expected text",
                             "target does not contain expected text", expected=expected)
    return Outcome.check(expected not in text, "target does not contain forbidden text",
                         "target contains forbidden text", forbidden=expected)


def _regex(config: PostconditionConfig, text: str) -> Outcome:
    pattern = _text_value(config) or ""
    return Outcome.check(search(pattern, text), "target matches regex",
                         "target does not match regex", pattern=pattern)


def _equals(config: PostconditionConfig, text: str) -> Outcome:
    if isinstance(config.value, str):
        return Outcome.check(text == config.value, "target equals expected string",
                             "target does not equal expected string", expected=config.value)
    try:
        document = parse_document(text, exact=True)
    except DocumentError as err:
        return Outcome.error(f"parse postcondition target as JSON: {err}")
    return Outcome.check(values_equal(document, to_exact(config.value)),
                         "target JSON equals expected value",
                         "target JSON does not equal expected value",
                         expected=to_plain(to_exact(config.value)))


def _json_path(config: PostconditionConfig, text: str) -> Outcome:
    """json_path_match with comparator ``equals`` (AgentClash re-encodes the expectation
    and runs the json_path_match validator on it)."""
    try:
        document = parse_document(text, exact=True)
    except DocumentError as err:
        return Outcome.error(f"parse actual JSON document: {err}")
    path = (config.json_path or "").strip()
    return evaluate(document, Expectation(path, "equals", to_exact(config.value)))


_CONDITIONS: dict[str, Callable[[PostconditionConfig, str], Outcome]] = {
    "exists": _exists, "not_exists": _exists, "contains": _contains, "not_contains": _contains,
    "regex_match": _regex, "equals": _equals, "json_path_match": _json_path,
}

KIND = Kind("postcondition", check, PostconditionConfig, strictness="strict", expected="omitted",
            needs_file_target=True, handles_missing_target=True, config_rules=config_rules,
            config_required=True, go_struct="PostconditionConfig",
            go_types={"condition": "string:scoring.PostconditionCondition"})
