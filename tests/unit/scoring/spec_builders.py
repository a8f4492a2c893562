"""Builders and stand-in validator kinds shared by the load-time validation tests.

Every case states the exact ``(field path, message)`` findings a spec must produce. Rules
specific to one validator type (``config_rules``) or to LLM judges are tested elsewhere.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel

from evalfleet.scoring import validators as registry
from evalfleet.scoring.errors import FieldError
from evalfleet.scoring.spec.models import EvaluationSpec
from evalfleet.scoring.spec.rules import validate_spec
from evalfleet.scoring.validators.base import CheckInput, Kind, LenientConfig, Outcome, StrictConfig

V = "evaluation_spec.validators"
D = "evaluation_spec.scorecard.dimensions"
SOURCES = "must be one of validators, metric, reliability, latency, cost, behavioral, llm_judge"

Finding = tuple[str, str]


# --- builders ----------------------------------------------------------------------------


def validator(key: str = "v", vtype: str = "contains", target: str = "final_output",
              expected_from: str | None = "literal:x", **extra: Any) -> dict[str, Any]:
    """One validator declaration (``expected_from=None`` leaves it out)."""
    decl: dict[str, Any] = {"key": key, "type": vtype, "target": target, **extra}
    if expected_from is not None:
        decl["expected_from"] = expected_from
    return decl


def body(**fields: Any) -> dict[str, Any]:
    """A valid minimal spec mapping with ``fields`` replacing top-level fields."""
    spec: dict[str, Any] = {
        "name": "spec", "version_number": 1, "judge_mode": "deterministic",
        "validators": [validator()], "scorecard": {"dimensions": ["correctness"]},
    }
    spec.update(fields)
    return spec


def card(*dimensions: Any, **fields: Any) -> dict[str, Any]:
    """A scorecard block with the given dimensions."""
    return {"dimensions": list(dimensions), **fields}


def capture(key: str = "out", ctype: str = "file_capture", path: str = "/work/out.txt",
            **extra: Any) -> dict[str, Any]:
    """One post-execution check declaration."""
    return {"key": key, "type": ctype, "path": path, **extra}


def judge(key: str = "j", **extra: Any) -> dict[str, Any]:
    """A judge declaration valid under the judge rules of docs/scoring.md §3."""
    return {"key": key, "mode": "rubric", "rubric": "Is it good?", "model": "claude-x", **extra}


def envelope(target: float | None = 100, maximum: float | None = 1000) -> dict[str, Any]:
    """A normalization envelope (``None`` leaves the bound out)."""
    found: dict[str, Any] = {}
    if target is not None:
        found["target"] = target
    if maximum is not None:
        found["max"] = maximum
    return found


def findings(spec: dict[str, Any], root: str = "evaluation_spec") -> list[Finding]:
    """The ``(field, message)`` pairs validation reports for ``spec``."""
    return [(f.field, f.message) for f in validate_spec(EvaluationSpec.model_validate(spec), root)]


# --- stand-in validator kinds ------------------------------------------------------------


def _never(given: CheckInput) -> Outcome:
    return Outcome.error("stand-in kind, not for evaluation")


class _PostconditionConfig(StrictConfig):
    condition: str = ""
    value: Any = None
    json_path: str = ""


class _LooseConfig(LenientConfig):
    match_mode: str = "contains"


class _StrictConfig(StrictConfig):
    threshold: float = 0.5


def _threshold_rule(config: Any, path: str) -> list[FieldError]:
    if not 0 <= config.threshold <= 1:
        return [FieldError(f"{path}.threshold", "must be between 0 and 1")]
    return []


def _kind(name: str, config: type[BaseModel] | None = None, **traits: Any) -> Kind:
    return Kind(name, _never, config=config, **traits)


# The general rules in validation.py read only these traits of a kind (§3): used for
# the types other people have not registered yet, so these tests do not wait for them.
STAND_INS = {
    "file_content_match": _kind("file_content_match", _LooseConfig, strictness="lenient",
                                needs_file_target=True),
    "file_exists": _kind("file_exists", _LooseConfig, strictness="lenient", expected="ignored",
                         needs_file_target=True),
    "file_json_schema": _kind("file_json_schema", _LooseConfig, strictness="lenient",
                              expected="ignored", needs_file_target=True),
    "directory_structure": _kind("directory_structure", _LooseConfig, strictness="lenient",
                                 expected="ignored", needs_file_target=True),
    "code_execution": _kind("code_execution", strictness="ignored", expected="ignored",
                            needs_file_target=True),
    "postcondition": _kind("postcondition", _PostconditionConfig, strictness="strict",
                           expected="omitted", needs_file_target=True, config_required=True),
    "tool_call_assertion": _kind("tool_call_assertion", strictness="ignored",
                                 expected="omitted", config_required=True),
}
# Test-only kinds that pin the generic config handling with exact messages.
FAKES = {
    "x_strict": _kind("x_strict", _StrictConfig, strictness="strict",
                      config_rules=_threshold_rule),
    "x_lenient_required": _kind("x_lenient_required", _LooseConfig, strictness="lenient",
                                config_required=True),
}


@pytest.fixture(autouse=True)
def kinds(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Register stand-ins for validator types not registered yet, and the test-only kinds."""
    for name, kind in STAND_INS.items():
        if registry.lookup(name) is None:
            monkeypatch.setitem(registry.VALIDATORS, name, kind)
    for name, kind in FAKES.items():
        monkeypatch.setitem(registry.VALIDATORS, name, kind)
    yield


# Configs valid under each type's own rules (§5), so only the rule under test fires.
CODE = {"test_command": "pytest -q"}
TOOL = {"tool_name": "search"}
POST = {"condition": "exists"}

M = "evaluation_spec.metrics"
B = "evaluation_spec.behavioral"
P = "evaluation_spec.pricing.models"
J = "evaluation_spec.llm_judges"
METRIC = {"key": "m", "type": "numeric", "collector": "run_total_latency_ms"}
SIGNALS = {"signals": [{"key": "error_cascade", "weight": 1}]}
S = "evaluation_spec.scorecard"


def _ids(table: list[tuple[Any, ...]]) -> list[str]:
    return [row[0] for row in table]
