"""YAML read as AgentClash's yaml.v3 reads it, in typed fields and through ``load_pack``.

The typed-field tables (``GO_TYPED``, ``GO_TYPE_ERRORS``) were produced with the same
yaml.v3 v3.0.1 build as ``test_yamlv3.py``'s ``GO_DECODED``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from unit.scoring.test_yamlv3 import decoded

from evalfleet.scoring import SpecError, load_pack
from evalfleet.scoring.compat import yamlv3
from evalfleet.scoring.spec import envelope as go

# --- typed fields (the pack envelope) -----------------------------------------------------


def typed(text: str, go_type: go.GoType) -> tuple[Any, list[str]]:
    node = yamlv3.compose(f"v: {text}\n")
    assert node is not None
    decoder = yamlv3.Decoder()
    out = go.decode(node, go.struct("X", v=go_type), decoder)
    return out.get("v", "unset"), [message for _, _, message in decoder.errors]


# Produced with the same yaml.v3 build, decoding `v: <text>` into a struct with one typed
# field (bool, string, int32).
GO_TYPED = [
    ("yes", go.BOOL, True), ("no", go.BOOL, False), ("on", go.BOOL, True),
    ("off", go.BOOL, False), ("y", go.BOOL, True), ("N", go.BOOL, False),
    ("Yes", go.BOOL, True), ("ON", go.BOOL, True), ("Off", go.BOOL, False),
    ('"yes"', go.BOOL, True), ("null", go.BOOL, "unset"), ("", go.BOOL, "unset"),
    ("012", go.STRING, "012"), ("1.0", go.STRING, "1.0"), ("yes", go.STRING, "yes"),
    ("2026-01-01", go.STRING, "2026-01-01"), ("1e3", go.STRING, "1e3"),
    (".inf", go.STRING, ".inf"), ("~", go.STRING, "unset"),
    ("1.5", go.INT32, 1), ("1e3", go.INT32, 1000), ("012", go.INT32, 10),
    ("-1.9", go.INT32, -1), ("0x10", go.INT32, 16),
]


@pytest.mark.parametrize(("text", "go_type", "expected"), GO_TYPED,
                         ids=[f"{r[1].name}-{r[0]!r}" for r in GO_TYPED])
def test_typed_fields_take_what_yaml_v3_gives_them(text: str, go_type: go.GoType,
                                                   expected: Any) -> None:
    """A string field takes the text as written, a bool field the YAML 1.1 spellings
    (decode.go ``case "y", "Y", "yes"``), an int field truncates floats."""
    assert (expected, []) == typed(text, go_type)


GO_TYPE_ERRORS = [
    ("1", go.BOOL, "cannot unmarshal !!int `1` into bool"),
    ('"true"', go.BOOL, "cannot unmarshal !!str `true` into bool"),
    ("[]", go.BOOL, "cannot unmarshal !!seq into bool"),
    ("{}", go.STRING, "cannot unmarshal !!map into string"),
    ("3000000000", go.INT32, "cannot unmarshal !!int `3000000000` into int32"),
    ('"5"', go.INT32, "cannot unmarshal !!str `5` into int32"),
    ("true", go.INT32, "cannot unmarshal !!bool `true` into int32"),
    (".inf", go.INT32, "cannot unmarshal !!float `.inf` into int32"),
    ("1e400", go.INT32, "cannot unmarshal !!str `1e400` into int32"),
    ("9223372036854775808", go.INT32, "cannot unmarshal !!int `9223372...` into int32"),
]


@pytest.mark.parametrize(("text", "go_type", "message"), GO_TYPE_ERRORS,
                         ids=[f"{r[1].name}-{r[0]!r}" for r in GO_TYPE_ERRORS])
def test_typed_field_errors_are_yaml_v3_s(text: str, go_type: go.GoType, message: str) -> None:
    """Type errors read exactly as yaml.v3's (the value cut to 7 bytes past 10)."""
    assert ("unset", [message]) == typed(text, go_type)

# --- through load_pack ---------------------------------------------------------------------

PACK = """\
pack: {slug: p, name: P, family: f}
version:
  number: 1
  evaluation_spec:
    name: s
    version_number: 1
    judge_mode: deterministic
    validators:
      - {key: v, type: exact_match, target: final_output, expected_from: "literal:x"}
    scorecard:
      dimensions: [SPECDIM]
input_sets:
  - key: main
    cases:
      - {challenge_key: c, case_key: k, payload: {n: 1}}
"""


@pytest.mark.parametrize(("dimension", "field", "message"), [
    ("{key: correctness, gate: yes, pass_threshold: 1}",
     "version.evaluation_spec.scorecard.dimensions[0].gate", "must be a boolean"),
    ("{key: correctness, weight: .inf}", "version.evaluation_spec.scorecard.dimensions[0].weight",
     "json: unsupported value: +Inf"),
    ("{key: correctness, weight: .nan}", "version.evaluation_spec.scorecard.dimensions[0].weight",
     "json: unsupported value: NaN"),
], ids=["gate-yes-is-a-string", "inf-cannot-be-json", "nan-cannot-be-json"])
def test_spec_values_go_through_json_as_in_agentclash(dimension: str, field: str,
                                                      message: str) -> None:
    """The spec is ``map[string]any`` then JSON: ``yes`` stays a string (not a bool for a
    bool field), NaN and ±Inf cannot be written at all."""
    with pytest.raises(SpecError) as raised:
        load_pack(PACK.replace("SPECDIM", dimension))
    assert [(field, message)] == [(e.field, e.message) for e in raised.value.errors]


def test_duplicate_spec_key_is_rejected_with_its_line() -> None:
    """A duplicate key anywhere yaml.v3 decodes is an error naming both lines."""
    text = PACK.replace("SPECDIM", "correctness").replace(
        "    name: s\n", "    name: s\n    name: t\n")
    with pytest.raises(SpecError) as raised:
        load_pack(text)
    [error] = raised.value.errors
    assert (error.field, error.message, error.line) == (
        "version.evaluation_spec", 'mapping key "name" already defined at line 5', 6)


def test_spec_keys_match_case_insensitively_as_go_json_does() -> None:
    """encoding/json matches ``Key`` and ``Weight`` to ``key`` and ``weight``."""
    pack = load_pack(PACK.replace("SPECDIM", "{Key: correctness, Weight: 2}"))
    dimension = pack.spec.scorecard.dimensions[0]
    assert (dimension.key, dimension.weight) == ("correctness", 2.0)


def test_envelope_type_errors_reject_the_pack_with_their_lines() -> None:
    """A typed envelope field of the wrong shape fails ParseYAML; evalfleet reports it."""
    text = PACK.replace("SPECDIM", "correctness").replace("  number: 1", "  number: [1]")
    with pytest.raises(SpecError) as raised:
        load_pack(text)
    found = [(e.field, e.message, e.line) for e in raised.value.errors]
    assert found == [("version.number", "cannot unmarshal !!seq into int32", 3)]


def test_case_values_keep_their_yaml_v3_meaning() -> None:
    """``value: no`` is the string ``no``; ``1e3`` the number 1000; ``12:30`` a string."""
    text = PACK.replace("SPECDIM", "correctness").replace(
        "payload: {n: 1}}", "expectations: [{key: a, value: no}, {key: b, value: 1e3}, "
                            "{key: c, value: 12:30}, {key: d, value: 0o10}]}")
    [case] = load_pack(text).cases
    assert [e.value for e in case.expectations] == ["no", 1000.0, "12:30", 8.0]


def test_json_marshal_writes_a_mappings_keys_sorted() -> None:
    """AgentClash turns the YAML spec into JSON with ``json.Marshal`` of a
    ``map[string]any``, which writes keys sorted; whatever decodes that JSON next (a
    validator's config, a JSON schema) meets them in that order."""
    value = decoded("{b: 1, a: {d: 2, c: 3}, A: 0}")

    assert list(yamlv3.to_json(value)) == ["A", "a", "b"]
    assert list(yamlv3.to_json(value)["a"]) == ["c", "d"]


@pytest.mark.parametrize("value", [
    {"a": "no", "b": "012", "c": "2026-01-01", "d": ["~", "", "1e3"]},
    {"n": [0, -1, 12, 1.5, 1e-05, 1e300, -0.0, 1.0, 2**70], "t": [True, False, None]},
    {"nested": {"x": [{"y": {}}, []], "é": "\u2028"}},
])
def test_a_node_built_from_a_value_decodes_as_its_json_text(value: Any) -> None:
    """``node_of`` gives what yaml.v3 composes from the value's JSON text (flow YAML)."""
    text = json.dumps(value)
    from_text = yamlv3.to_json(yamlv3.to_any(yamlv3.compose(text), yamlv3.Decoder()))
    from_node = yamlv3.to_json(yamlv3.to_any(yamlv3.node_of(value), yamlv3.Decoder()))

    assert from_node == from_text
