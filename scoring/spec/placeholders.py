"""Case placeholders in test commands (docs/scoring.md §7.3).

``{{ path }}`` is looked up in the case context (the payload merged with the inline-valued
inputs: the caller merges, this module takes the plain mapping). The path is split on
``.`` and walked through objects only. Rendering is lenient: an unresolved placeholder
stays in the command literally and is reported.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

log = logging.getLogger(__name__)

PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_.]*)\s*\}\}")
_MISSING = object()
_GO_HTML_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026",
                    "\u2028": "\\u2028", "\u2029": "\\u2029"}


@dataclass(frozen=True)
class Rendered:
    """A rendered command and the placeholders left in it."""

    text: str
    unresolved: tuple[str, ...] = ()


def render(template: str, context: Mapping[str, Any]) -> Rendered:
    """Fill every resolvable ``{{ path }}`` of ``template`` from ``context``."""
    unresolved: list[str] = []

    def fill(match: re.Match[str]) -> str:
        value = lookup(context, match.group(1))
        if value is _MISSING:
            unresolved.append(match.group(1))
            return match.group(0)
        return stringify(value)

    text = PLACEHOLDER.sub(fill, template)
    if unresolved:
        log.warning("unresolved placeholders left in test command: %s", ", ".join(unresolved))
    return Rendered(text=text, unresolved=tuple(unresolved))


def merge_case_context(payload: Mapping[str, Any],
                       inline_inputs: Mapping[str, Any]) -> dict[str, Any]:
    """The §7.3 context: ``payload`` overlaid with inputs' inline values (inputs win)."""
    return {**payload, **inline_inputs}


def lookup(context: Mapping[str, Any], path: str) -> Any:
    """Walk ``a.b.c`` through nested mappings only; a missing step gives ``_MISSING``."""
    value: Any = context
    for part in path.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return _MISSING
        value = value[part]
    return value


def stringify(value: Any) -> str:
    """Render a value: strings as-is, ``true``/``false``, ints, fixed-point floats, JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float) and value == value and abs(value) != float("inf"):
        return fixed_point(value)
    return compact_json(value)


def fixed_point(value: float) -> str:
    """Shortest digits in fixed-point, trailing zeros and ``.`` trimmed (``2.50`` → ``2.5``)."""
    digits = format(Decimal(repr(value)), "f")
    if "." in digits:
        digits = digits.rstrip("0").rstrip(".")
    return digits or "0"


def compact_json(value: Any) -> str:
    """Go-style compact JSON: sorted keys, no spaces, ``<>&`` escaped."""
    encoded = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    for char, escape in _GO_HTML_ESCAPES.items():
        encoded = encoded.replace(char, escape)
    return encoded
