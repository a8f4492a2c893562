"""json_path_match's comparators over exact JSON values (docs/scoring.md §5.6, §5.21).

Values come from :func:`scoring.compat.jsondoc.parse_document` with ``exact=True``: numbers are
:class:`~scoring.compat.jsondoc.Number` literals. The rules, as AgentClash applies them:

* **equals** — when the actual is a number, the expected must be a number too and they
  compare as float64 (``10 == 10.0``). Otherwise deep equality after normalizing numbers
  (integer literals → int64, literals with ``.``/``e`` → float64), where an int64 and a
  float64 are *different* values (``[1]`` ≠ ``[1.0]``) and a number never equals a string.
* **contains** — actual string: the expected must be a string (else error), substring test;
  actual array: some element equals the expected; anything else: both sides as Go JSON
  text, substring test (so ``42`` contains ``4``).
* **greater_than** / **less_than** — strict float comparison; a non-numeric side is an error.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .jsondoc import Number
from .textform import go_json

COMPARATORS = ("equals", "contains", "greater_than", "less_than", "exists")
NOT_RESOLVED = "json path did not resolve to a value"
_INT64 = 1 << 63


class ComparisonError(ValueError):
    """The values cannot be compared with that comparator."""


def any_number(value: Any) -> float | None:
    """The float64 value of a JSON number, or None for anything else."""
    if isinstance(value, Number):
        return value.as_float()
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return None


def values_equal(actual: Any, expected: Any) -> bool:
    """AgentClash's ``jsonValuesEqual``."""
    number = any_number(actual)
    if number is not None:
        other = any_number(expected)
        return other is not None and number == other
    return _deep_equal(_normalized(actual), _normalized(expected))


def _normalized(value: Any) -> Any:
    if isinstance(value, Number):
        return _number_value(value.text)
    if isinstance(value, list):
        return [_normalized(item) for item in value]
    if isinstance(value, dict):
        return {key: _normalized(item) for key, item in value.items()}
    return value


def _number_value(text: str) -> int | float | str:
    """Go's ``normalizeJSONValue``: int64 if integral and in range, else float64, else text."""
    if not any(c in text for c in ".eE"):
        try:
            whole = int(text)
        except ValueError:  # beyond Python's digit limit, far outside int64 anyway
            whole = _INT64
        if -_INT64 <= whole < _INT64:
            return whole
    as_float = Number(text).as_float()
    return text if as_float is None else as_float


def _deep_equal(left: Any, right: Any) -> bool:
    if type(left) is not type(right):
        return False
    if isinstance(left, list):
        return len(left) == len(right) and all(map(_deep_equal, left, right))
    if isinstance(left, dict):
        return left.keys() == right.keys() and all(_deep_equal(v, right[k])
                                                   for k, v in left.items())
    return bool(left == right)


def marshal(value: Any) -> str:
    """Go ``json.Marshal`` of a decoded value; numbers print as their literal text."""
    if isinstance(value, Number):
        return value.text
    if isinstance(value, dict):
        return "{" + ",".join(f"{go_json(k)}:{marshal(value[k])}" for k in sorted(value)) + "}"
    if isinstance(value, list):
        return "[" + ",".join(marshal(item) for item in value) + "]"
    return go_json(value)


def compare(comparator: str, actual: Any, expected: Any) -> tuple[bool, str]:
    """Apply ``comparator`` to an existing actual value; returns ``(passed, fail_reason)``.

    Raises:
        ComparisonError: for an unsupported comparator or values it cannot compare.
    """
    rule = _RULES.get(comparator)
    if rule is None:
        raise ComparisonError(f'unsupported comparator "{comparator}"')
    return rule(actual, expected)


def _equals(actual: Any, expected: Any) -> tuple[bool, str]:
    return values_equal(actual, expected), "json path value did not equal expected value"


def _contains(actual: Any, expected: Any) -> tuple[bool, str]:
    if isinstance(actual, str):
        if not isinstance(expected, str):
            raise ComparisonError("expected value must be a string for contains comparator")
        return expected in actual, "json path value did not contain expected substring"
    if isinstance(actual, list):
        found = any(values_equal(item, expected) for item in actual)
        return found, "json path array did not contain expected value"
    return marshal(expected) in marshal(actual), "json path value did not contain expected value"


def _ordered(greater: bool) -> Callable[[Any, Any], tuple[bool, str]]:
    word = "greater" if greater else "less"

    def rule(actual: Any, expected: Any) -> tuple[bool, str]:
        left, right = any_number(actual), any_number(expected)
        if left is None:
            raise ComparisonError("actual value is not numeric")
        if right is None:
            raise ComparisonError("expected value is not numeric")
        return (left > right if greater else left < right), \
            f"json path value was not {word} than expected value"

    return rule


def _exists(actual: Any, expected: Any) -> tuple[bool, str]:
    return True, ""


_RULES: dict[str, Callable[[Any, Any], tuple[bool, str]]] = {
    "equals": _equals,
    "contains": _contains,
    "greater_than": _ordered(True),
    "less_than": _ordered(False),
    "exists": _exists,
}
