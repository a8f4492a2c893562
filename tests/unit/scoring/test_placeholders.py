"""Case placeholders (§7.3): lookup, value rendering, lenient misses."""

from __future__ import annotations

from typing import Any

import pytest

from evalfleet.scoring.spec.placeholders import merge_case_context, render


@pytest.mark.parametrize(("value", "text"), [
    ("s p", "s p"), (True, "true"), (False, "false"), (42, "42"), (-7, "-7"),
    (2.50, "2.5"), (3.0, "3"), (0.1, "0.1"), (1e21, "1000000000000000000000"),
    (1e-7, "0.0000001"), (None, "null"), ([1, "a"], '[1,"a"]'),
    ({"b": 1, "a": "<&>"}, '{"a":"\\u003c\\u0026\\u003e","b":1}'),
])
def test_values_render_like_agentclash(value: Any, text: str) -> None:
    """Strings as-is, booleans, decimal ints, trimmed fixed-point floats, compact JSON."""
    assert render("{{v}}", {"v": value}).text == text


def test_paths_walk_objects_only() -> None:
    """Dots walk nested objects; a list in the way leaves the placeholder."""
    context = {"a": {"b": {"c": "deep"}}, "l": [{"x": 1}]}
    rendered = render("{{ a.b.c }} {{l.0.x}} {{  missing }}", context)
    assert rendered.text == "deep {{l.0.x}} {{  missing }}"
    assert rendered.unresolved == ("l.0.x", "missing")


def test_placeholder_syntax() -> None:
    """Names start with a letter or ``_``; anything else is not a placeholder."""
    assert render("{{ 1x }} {{_y}} {{a-b}}", {"_y": "ok"}).text == "{{ 1x }} ok {{a-b}}"


def test_inputs_override_payload() -> None:
    """Inline-valued inputs win over payload keys of the same name."""
    context = merge_case_context({"n": 1, "m": 2}, {"n": 9})
    assert render("{{n}} {{m}}", context).text == "9 2"
