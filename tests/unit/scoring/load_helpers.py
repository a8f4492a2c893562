"""Specs, packs and finding extractors shared by the loading tests."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from evalfleet.scoring import SpecError, load_pack

SPEC: dict[str, Any] = {
    "name": "demo",
    "version_number": 1,
    "judge_mode": "deterministic",
    "validators": [{"key": "answer", "type": "exact_match", "target": "final_output",
                    "expected_from": "case.expectations.answer"}],
    "scorecard": {"dimensions": ["correctness"]},
}

SPEC_YAML = """\
name: demo
version_number: 1
judge_mode: deterministic
validators:
  - key: answer
    type: exact_match
    target: final_output
    expected_from: case.expectations.answer
scorecard:
  dimensions: [correctness]
"""

PACK_YAML = """\
pack:
  slug: demo-pack
  family: reasoning
  envelope_is_lenient: true
version:
  number: 3
  evaluation_spec:
    name: demo
    version_number: 1
    judge_mode: deterministic
    validators:
      - key: answer
        type: exact_match
        target: final_output
        expected_from: case.expectations.answer
    scorecard:
      dimensions: [correctness]
challenges:
  - key: sum
input_sets:
  - key: main
    cases:
      - challenge_key: sum
        case_key: first
        payload: {question: "1+1", asked: 2026-01-01}
        expectations:
          - {key: answer, kind: text, value: "2"}
      - challenge_key: sum
        case_key: second
        payload: {question: "2+2"}
  - key: other
    cases:
      - {challenge_key: sum, case_key: ignored}
"""


def spec_body(**fields: Any) -> dict[str, Any]:
    """A deep copy of the valid spec with ``fields`` replacing top-level fields."""
    body = copy.deepcopy(SPEC)
    body.update(fields)
    return body


def errors_of(source: Any) -> list[tuple[str, str]]:
    """The ``(field, message)`` pairs of the SpecError that loading ``source`` raises."""
    with pytest.raises(SpecError) as raised:
        load_pack(source)
    return [(e.field, e.message) for e in raised.value.errors]


def lines_of(source: Any) -> list[tuple[str, int | None]]:
    """The ``(field, line)`` pairs of the SpecError that loading ``source`` raises."""
    with pytest.raises(SpecError) as raised:
        load_pack(source)
    return [(e.field, e.line) for e in raised.value.errors]

E = "evaluation_spec"


def write_file(tmp_path: Path, name: str, text: str) -> Path:
    """Write ``text`` to ``tmp_path/name`` and return the path."""
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path
