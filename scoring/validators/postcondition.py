"""postcondition: a condition on a captured file after the run (scoring-semantics §5.21).

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

from ..errors import FieldError
from ..jsoncompare import values_equal
from ..jsondoc import DocumentError, parse_document, to_exact
from ..patterns import PatternError, compile_pattern, search
from ..references import Resolution
from .base import CheckInput, Kind, Outcome, StrictConfig
from .json_path_match import Expectation, evaluate

CONDITIONS = ("exists", "not_exists", "contains", "not_contains", "regex_match", "equals",
              "json_path_match")
_STRING_VALUE = ("contains", "not_contains", "regex_match")


class PostconditionConfig(StrictConfig):
    """``{condition, value?, json_path?}``."""

    condition: str = ""
    value: Any = None
    """Raw JSON; its required type depends on the condition."""
    json_path: str | None = None
    """Only for ``json_path_match``."""


def config_rules(config: PostconditionConfig, path: str) -> list[FieldError]:
    """Load-time rules for the condition and the fields it needs."""
    condition = config.condition
    if not condition:
        return [FieldError(f"{path}.condition", "is required")]
    if condition not in CONDITIONS:
        return [FieldError(f"{path}.condition", "must be one of " + ", ".join(CONDITIONS))]
    if condition in ("exists", "not_exists"):
        return _absent(config, path)
    if condition in _STRING_VALUE:
        return _string_value(config, path)
    return _required_value(config, path)


def _absent(config: PostconditionConfig, path: str) -> list[FieldError]:
    message = f"must be omitted for {config.condition} condition"
    fields = (("value", config.value is not None), ("json_path", config.json_path is not None))
    return [FieldError(f"{path}.{name}", message) for name, present in fields if present]


def _string_value(config: PostconditionConfig, path: str) -> list[FieldError]:
    if not isinstance(config.value, str):
        return [FieldError(f"{path}.value",
                           f"must be a JSON string for {config.condition} condition")]
    if config.condition == "regex_match":
        try:
            compile_pattern(config.value)
        except PatternError as err:
            return [FieldError(f"{path}.value", f"invalid regex pattern: {err}")]
    return []


def _required_value(config: PostconditionConfig, path: str) -> list[FieldError]:
    errors = []
    if config.condition == "json_path_match" and not (config.json_path or "").strip():
        errors.append(FieldError(f"{path}.json_path", "is required for json_path_match condition"))
    if config.value is None:
        errors.append(FieldError(f"{path}.value", f"is required for {config.condition} condition"))
    return errors


def check(given: CheckInput) -> Outcome:
    if given.decl.config is None:
        return Outcome.error("postcondition config is required", "pack_error")
    config: PostconditionConfig = given.config
    problems = config_rules(config, "config")
    if problems:
        first = problems[0]
        return Outcome.error(f"invalid postcondition config: {first.field} {first.message}",
                             "pack_error")
    if not given.target.available:
        return _missing(config.condition, given.target)
    return _CONDITIONS[config.condition](config, given.actual or "")


def _missing(condition: str, target: Resolution) -> Outcome:
    if "unavailable" in target.reason or condition not in ("exists", "not_exists"):
        return Outcome.unavailable(target.reason or "evidence is unavailable")
    return Outcome.check(condition == "not_exists", "file correctly does not exist",
                         "file does not exist", condition=condition)


def _exists(config: PostconditionConfig, text: str) -> Outcome:
    return Outcome.check(config.condition == "exists", "file exists",
                         "file exists but should not", condition=config.condition)


def _contains(config: PostconditionConfig, text: str) -> Outcome:
    found = config.value in text
    if config.condition == "contains":
        return Outcome.check(found, "", "file does not contain expected value",
                             condition="contains")
    return Outcome.check(not found, "", "file contains forbidden value", condition="not_contains")


def _regex(config: PostconditionConfig, text: str) -> Outcome:
    return Outcome.check(search(config.value, text), "", "file does not match regex pattern",
                         condition="regex_match")


def _equals(config: PostconditionConfig, text: str) -> Outcome:
    if isinstance(config.value, str):
        return Outcome.check(text == config.value, "", "file content does not equal value",
                             condition="equals")
    try:
        document = parse_document(text, exact=True)
    except DocumentError as err:
        return Outcome.error(f"parse actual JSON document: {err}", condition="equals")
    return Outcome.check(values_equal(document, to_exact(config.value)), "",
                         "file JSON does not equal value", condition="equals")


def _json_path(config: PostconditionConfig, text: str) -> Outcome:
    try:
        document = parse_document(text, exact=True)
    except DocumentError as err:
        return Outcome.error(f"parse actual JSON document: {err}", condition="json_path_match")
    path = (config.json_path or "").strip()
    outcome = evaluate(document, Expectation(path, "equals", to_exact(config.value)))
    return Outcome(outcome.state, outcome.verdict, outcome.score, outcome.reason,
                   {"condition": "json_path_match", **outcome.evidence}, outcome.outcome_class)


_CONDITIONS: dict[str, Callable[[PostconditionConfig, str], Outcome]] = {
    "exists": _exists, "not_exists": _exists, "contains": _contains, "not_contains": _contains,
    "regex_match": _regex, "equals": _equals, "json_path_match": _json_path,
}

KIND = Kind("postcondition", check, PostconditionConfig, strictness="strict", expected="omitted",
            needs_file_target=True, handles_missing_target=True, config_rules=config_rules,
            config_required=True)
