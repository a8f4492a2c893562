"""json_path_match: a JSONPath value in the actual JSON, compared with the expected
(docs/scoring.md §5.6).

The expected text is either a path starting with ``$`` (an existence check) or a JSON object
``{path, comparator?, value?}``; other keys are ignored and, as with Go's struct decoding,
key names match case-insensitively. The comparator defaults to ``exists`` when ``value`` is
absent or null, else ``equals``. Config ignored.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..compat.jsoncompare import COMPARATORS, NOT_RESOLVED, ComparisonError, compare
from ..compat.jsondoc import DocumentError, Number, parse_document, to_plain
from ..compat.jsonpath import PathError, lookup
from ..compat.lenient import json_kind
from ..compat.textnorm import trim
from .base import CheckInput, Kind, Outcome

_FIELDS = ("path", "comparator", "value")


class ExpectationError(ValueError):
    """The expected text is not a valid json_path_match expectation."""


@dataclass(frozen=True)
class Expectation:
    """What to look up and how to compare it."""

    path: str
    comparator: str
    value: Any = None


def parse_expectation(text: str) -> Expectation:
    """Read the expected text.

    Raises:
        ExpectationError: when it is empty, not JSON, lacks a path or names an
            unsupported comparator.
    """
    text = trim(text)
    if not text:
        raise ExpectationError("expectation is empty")
    if text.startswith("$"):
        return Expectation(text, "exists")
    try:
        document = parse_document(text, exact=True)
    except DocumentError as err:
        raise ExpectationError(str(err)) from None
    return _expectation(_fields(document))


def _fields(document: Any) -> dict[str, Any]:
    if document is None:
        return {}
    if not isinstance(document, dict):
        raise ExpectationError(f"json: cannot unmarshal {_kind(document)} into Go value of "
                               "type scoring.jsonPathExpectation")
    fields: dict[str, Any] = {}
    for key, value in document.items():
        if key.lower() in _FIELDS:
            fields[key.lower()] = value
    return fields


def _expectation(fields: dict[str, Any]) -> Expectation:
    path, comparator = _text(fields, "path"), _text(fields, "comparator")
    if not path:
        raise ExpectationError("path is required")
    value = fields.get("value")
    comparator = comparator or ("exists" if value is None else "equals")
    if comparator not in COMPARATORS:
        raise ExpectationError(f'unsupported comparator "{comparator}"')
    return Expectation(path, comparator, value)


def _text(fields: dict[str, Any], name: str) -> str:
    value = fields.get(name)
    if value is not None and not isinstance(value, str):
        raise ExpectationError(f"json: cannot unmarshal {_kind(value)} into Go struct field "
                               f"jsonPathExpectation.{name} of type string")
    return trim(value or "")


def _kind(value: Any) -> str:
    """The JSON kind Go's unmarshal errors name (``number``, ``array``, ...)."""
    return "number" if isinstance(value, Number) else json_kind(value)


def evaluate(document: Any, expectation: Expectation) -> Outcome:
    """Look the path up in an already-parsed (exact) document and compare."""
    try:
        exists, actual = lookup(document, expectation.path)
    except PathError as err:
        return Outcome.error(f"evaluate JSONPath expression: {err}",
                             path=expectation.path)
    evidence = {"path": expectation.path, "comparator": expectation.comparator,
                "expected": to_plain(expectation.value), "actual": to_plain(actual),
                "exists": exists}
    return _decide(exists, actual, expectation, evidence)


def _decide(exists: bool, actual: Any, expectation: Expectation,
            evidence: dict[str, Any]) -> Outcome:
    if not exists:
        return Outcome.failed(NOT_RESOLVED, **evidence)
    try:
        ok, reason = compare(expectation.comparator, actual, expectation.value)
    except ComparisonError as err:
        evidence.pop("expected")
        return Outcome.error(f"compare JSONPath value: {err}", **evidence)
    return Outcome.check(ok, "", reason, **evidence)


def check(given: CheckInput) -> Outcome:
    try:
        document = parse_document(given.actual or "", exact=True)
    except DocumentError as err:
        return Outcome.error(f"parse actual JSON document: {err}", error=str(err))
    try:
        expectation = parse_expectation(given.expected or "")
    except ExpectationError as err:
        return Outcome.error(f"parse json_path_match expectation: {err}",
                             error=str(err))
    return evaluate(document, expectation)


KIND = Kind("json_path_match", check)
