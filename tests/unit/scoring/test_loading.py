"""Loading specs and packs (docs/scoring.md §2.1, §3): every kind of source, and packs —
their cases, manifest, version-prefixed findings and lenient envelope.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from load_helpers import PACK_YAML, SPEC, SPEC_YAML, errors_of, spec_body, write_file

from evalfleet.scoring import Pack, load_pack, load_spec
from evalfleet.scoring.spec.models import EvaluationSpec

# --- sources ------------------------------------------------------------------------------




SOURCES = {
    "mapping": lambda tmp: SPEC,
    "wrapped-mapping": lambda tmp: {"evaluation_spec": SPEC},
    "json-text": lambda tmp: json.dumps(SPEC),
    "json-text-leading-whitespace": lambda tmp: "\n  " + json.dumps(SPEC, indent=2),
    "yaml-text": lambda tmp: SPEC_YAML,
    "wrapped-yaml-text": lambda tmp: "evaluation_spec:\n" + "".join(
        f"  {line}\n" for line in SPEC_YAML.splitlines()),
    "path-object-yaml": lambda tmp: write_file(tmp, "spec.yaml", SPEC_YAML),
    "path-object-yml": lambda tmp: write_file(tmp, "spec.yml", SPEC_YAML),
    "path-object-json": lambda tmp: write_file(tmp, "spec.json", json.dumps(SPEC)),
    "path-string-yaml": lambda tmp: str(write_file(tmp, "spec.yaml", SPEC_YAML)),
    "path-string-json": lambda tmp: str(write_file(tmp, "spec.json", json.dumps(SPEC))),
    "path-string-yaml-flow-style": lambda tmp: str(write_file(tmp, "flow.yaml", json.dumps(SPEC))),
    "pack-path": lambda tmp: write_file(tmp, "pack.yaml", PACK_YAML),
    "pack-text": lambda tmp: PACK_YAML,
}


@pytest.mark.parametrize("source", SOURCES.values(), ids=SOURCES.keys())
def test_load_spec_from_every_source(source: Any, tmp_path: Path) -> None:
    """load_spec accepts a mapping, JSON/YAML text, a path (str or Path) or a pack."""
    spec = load_spec(source(tmp_path))
    assert isinstance(spec, EvaluationSpec)
    assert spec.name == "demo"
    assert [v.key for v in spec.validators] == ["answer"]
    assert spec.validators[0].expected_from == "case.expectations.answer"


def test_loaded_spec_is_normalized() -> None:
    """A loaded spec has the default strategy and expanded string-form dimensions."""
    spec = load_spec(SPEC_YAML)
    dimension = spec.scorecard.dimensions[0]
    assert spec.scorecard.strategy == "weighted"
    assert (dimension.key, dimension.source, dimension.better_direction) == (
        "correctness", "validators", "higher")


def test_load_spec_does_not_mutate_a_mapping_source() -> None:
    """Loading from a mapping leaves the caller's mapping unchanged."""
    source = spec_body()
    before = copy.deepcopy(source)
    load_spec(source)
    assert source == before

# --- packs --------------------------------------------------------------------------------


def test_pack_cases_come_from_every_input_set() -> None:
    """A pack's cases are those of all its input sets, in order, each knowing its set."""
    pack = load_pack(PACK_YAML)
    assert [c.qualified_key for c in pack.cases] == ["main/first", "main/second",
                                                     "other/ignored"]
    first = pack.cases[0]
    assert first.challenge_key == "sum"
    assert first.payload_value() == {"question": "1+1", "asked": "2026-01-01T00:00:00Z"}
    entry = first.expectation("answer")
    assert entry is not None and entry.value == "2"


def test_pack_keeps_its_manifest_and_spec() -> None:
    """A loaded pack carries its spec and its raw (lenient) manifest."""
    pack = load_pack(PACK_YAML)
    assert pack.spec.name == "demo"
    assert pack.manifest["pack"]["slug"] == "demo-pack"
    assert pack.manifest["version"]["number"] == 3


@pytest.mark.parametrize(("case_key", "expected"), [
    ("second", "second"), ("first", "first"), ("missing", None), (None, None),
], ids=["by-key", "first-key", "unknown-key", "none-with-two-cases"])
def test_pack_case_lookup(case_key: str | None, expected: str | None) -> None:
    """Pack.case finds a case by key; None picks the only case, and there are two here."""
    found = load_pack(PACK_YAML).case(case_key)
    assert (found.case_key if found else None) == expected


def test_pack_case_none_picks_the_only_case() -> None:
    """With exactly one case, Pack.case(None) returns it."""
    manifest = {"version": {"evaluation_spec": SPEC},
                "input_sets": [{"key": "s", "cases": [{"case_key": "only", "payload": {}}]}]}
    found = load_pack(manifest).case(None)
    assert found is not None and found.case_key == "only"


@pytest.mark.parametrize("source", [
    SPEC, {"evaluation_spec": SPEC}, {"version": {"evaluation_spec": SPEC}},
    {"version": {"evaluation_spec": SPEC}, "input_sets": []},
    {"version": {"evaluation_spec": SPEC}, "input_sets": [{"key": "empty"}]},
], ids=["bare", "wrapped", "pack-without-input-sets", "empty-input-sets", "set-without-cases"])
def test_sources_without_cases(source: dict[str, Any]) -> None:
    """A bare spec, or a pack without cases in its first input set, loads with no cases."""
    pack = load_pack(source)
    assert isinstance(pack, Pack) and pack.cases == []


def test_pack_findings_are_prefixed_with_version() -> None:
    """Validation findings of a pack's spec use ``version.evaluation_spec`` paths."""
    manifest = {"pack": {"slug": "p"},
                "version": {"evaluation_spec": spec_body(name="", version_number=0)}}
    assert errors_of(manifest) == [
        ("version.evaluation_spec.name", "is required"),
        ("version.evaluation_spec.version_number", "must be greater than 0"),
    ]


def test_pack_decode_findings_are_prefixed_with_version() -> None:
    """Strict-decoding findings of a pack's spec use ``version.evaluation_spec`` paths."""
    body = spec_body(scorecard={"dimensions": [{"key": "correctness", "gait": True}]})
    assert errors_of({"version": {"evaluation_spec": body}}) == [
        ("version.evaluation_spec.scorecard.dimensions[0].gait", 'unknown field "gait"'),
    ]


MISSING = [
    ("empty-mapping", {}, [("manifest", "is required")]),
    ("empty-text", "", [("manifest", "is required")]),
    ("blank-text", "  \n\n", [("manifest", "is required")]),
    ("yaml-list", "- 1\n- 2\n", [("manifest", "is required")]),
    ("yaml-scalar", "just words", [("manifest", "is required")]),
    ("wrapped-empty", {"evaluation_spec": {}}, [("evaluation_spec", "is required")]),
    ("wrapped-null", "evaluation_spec:\n", [("evaluation_spec", "is required")]),
    ("pack-without-version", {"pack": {"slug": "p"}},
     [("version.evaluation_spec", "is required")]),
    ("pack-version-without-spec", {"pack": {}, "version": {"number": 1}},
     [("version.evaluation_spec", "is required")]),
    ("pack-null-spec", {"version": {"evaluation_spec": None}},
     [("version.evaluation_spec", "is required")]),
    ("pack-version-not-object", {"version": 3},
     [("version", "cannot unmarshal !!int `3` into challengepack.rawVersionMetadata")]),
]


@pytest.mark.parametrize(("case", "source", "expected"), MISSING, ids=[m[0] for m in MISSING])
def test_missing_spec(case: str, source: Any, expected: list[tuple[str, str]]) -> None:
    """An empty or absent spec is reported at the manifest or the spec's own path."""
    assert errors_of(source) == expected


def test_pack_envelope_is_lenient() -> None:
    """Unknown fields in the pack envelope (outside evaluation_spec) are ignored."""
    manifest = {"pack": {"slug": "p", "whatever": [1]}, "not_a_pack_field": True,
                "version": {"number": 1, "unknown": {}, "evaluation_spec": SPEC}}
    assert load_spec(manifest).name == "demo"


def _json_pack(**changes: Any) -> str:
    manifest: dict[str, Any] = {
        "pack": {"slug": "p", "name": "P", "family": "f"},
        "version": {"number": 1, "evaluation_spec": SPEC},
        "challenges": [{"key": "c1", "title": "C", "category": "x", "difficulty": "easy"}],
        "input_sets": [{"key": "default", "name": "D",
                        "cases": [{"challenge_key": "c1", "case_key": "k", "payload": {}}]}]}
    manifest.update(changes)
    return json.dumps(manifest)


def test_a_json_pack_text_is_read_as_agentclash_uploads_it() -> None:
    """AgentClash reads an uploaded pack, JSON or YAML, with ``ParseYAML``: unknown keys are
    ignored, a case key written as a number is its text."""
    text = _json_pack(whatever=[1])
    text = text.replace('"case_key": "k"', '"case_key": 12')

    assert [c.qualified_key for c in load_pack(text).cases] == ["default/12"]


@pytest.mark.parametrize(("changes", "expected"), [
    ({"challenges": {"key": "c1"}},
     ("challenges", "cannot unmarshal !!map into []challengepack.ChallengeDefinition")),
    ({"pack": {"slug": ["p"]}}, ("pack.slug", "cannot unmarshal !!seq into string")),
])
def test_a_json_pack_envelope_of_the_wrong_shape_is_rejected(changes: dict[str, Any],
                                                              expected: tuple[str, str]) -> None:
    """What the typed envelope cannot hold is rejected with its field path (was ignored)."""
    field, fragment = expected
    found = errors_of(_json_pack(**changes))

    assert any(f == field and fragment in m for f, m in found), found


def test_a_json_pack_number_that_is_not_an_integer_is_rejected() -> None:
    """``version.number`` is an int32: a string is a yaml.v3 type error."""
    found = errors_of(_json_pack(version={"number": "one", "evaluation_spec": SPEC}))

    assert [f for f, _ in found] == ["version.number"], found


def test_a_pack_mapping_is_read_as_its_json_text() -> None:
    """A pack given as a mapping (a RunRequest's inline pack) is decoded as its JSON would
    be: the same typed envelope, the same field paths."""
    manifest = json.loads(_json_pack(challenges={"key": "c1"}))

    assert errors_of(manifest) == errors_of(json.dumps(manifest))
    assert errors_of(manifest)[0][0] == "challenges"
