"""Conformance: evalfleet's scorecard equals AgentClash's for the same input.

Every golden in ``goldens/`` is the reference engine's own output (README.md says how it
was produced); none comes from evalfleet. A case compares:

* ``exact`` (default): the whole output, every field, equal;
* ``rejected``: both refuse the input at load time; Go stops at its first decode error and
  wraps it, evalfleet lists every problem with its field path, so evalfleet's message must
  contain each of the case's ``fragments`` (taken from Go's message);
* ``go_panics``: the reference engine panics on the input; evalfleet must still answer
  with a scorecard (no exception), as "no input crashes scoring" asks;
* a ``divergence`` is a documented, deliberate difference: ``replace`` edits Go's text
  (Go 1.19 ran; AgentClash ships Go 1.25) or ``expected`` gives evalfleet's answer, with
  ``why``.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from conformance_runner import run

GOLDENS = Path(__file__).parent / "goldens"
COMMIT = "439e20ba98d49ed3f0e49067cfa416267c5b1a61"


def _load() -> list[Any]:
    cases = []
    for path in sorted(GOLDENS.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        assert data["reference"]["commit"] == COMMIT, path
        cases += [pytest.param(case, id=case["id"]) for case in data["cases"]]
    return cases


CASES = _load()


def expected_of(case: dict[str, Any]) -> dict[str, Any]:
    """The golden, with a documented divergence applied."""
    divergence = case.get("divergence")
    if divergence is None:
        return dict(case["expected"])
    assert divergence.get("why"), case["id"]
    if "expected" in divergence:
        return dict(divergence["expected"])
    text = json.dumps(case["expected"], ensure_ascii=False)
    for old, new in divergence["replace"]:
        assert old in text, (case["id"], old)
        text = text.replace(json.dumps(old)[1:-1], json.dumps(new)[1:-1])
    return dict(json.loads(text))


@pytest.mark.parametrize("case", CASES)
def test_evalfleet_answers_as_agentclash(case: dict[str, Any]) -> None:
    """The golden's request through evalfleet gives the golden's output."""
    got = run(copy.deepcopy(case["request"]))

    if case.get("mode") == "go_panics":
        assert "panic" in case["expected"], case["id"]
        assert "document" in got, got
        return
    if case.get("mode") == "rejected":
        assert "load_error" in case["expected"], case["id"]
        assert "load_error" in got, got
        missing = [f for f in case["fragments"] if f not in got["load_error"]]
        assert not missing, (got["load_error"], missing)
        return
    assert got == expected_of(case)


def test_every_golden_ran_or_was_read_at_the_pinned_commit() -> None:
    """Each golden says how it was obtained; there are goldens for every issue row."""
    ids = {p.values[0]["id"]: p.values[0] for p in CASES}
    assert all(c["how"] in ("ran", "read") for c in ids.values())
    for row in ("weighted-pass", "no-dim-available", "validity-errored-validator",
                "jsonpath-compare-error", "yaml-7a-no", "gate-yes", "dup-key", "yaml-inf",
                "10-json-nan", "hp-1.5", "two-sets", "13-payload-empty", "14-regex-C",
                "15-underscore", "16-hybrid-nogate", "17-fail-before-unavail", "18-Weight"):
        assert f"issue_rows/{row}" in ids, row
