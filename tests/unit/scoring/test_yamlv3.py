"""YAML read as AgentClash's yaml.v3 (v3.0.1) reads it: scalars, keys, merges, aliases.

``GO_DECODED`` was produced by running yaml.v3 v3.0.1 (Debian golang-gopkg-yaml.v3-dev
3.0.1-3, the version AgentClash pins) under Go 1.19.8: each text was decoded as
``v: <text>`` into ``map[string]any`` and the value written with ``json.Marshal``; the
middle column is the Go type yaml.v3 produced. Rule references are to yaml.v3's
``resolve.go`` and ``decode.go``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from scoring import SpecError, load_pack
from scoring.compat import yamlv3
from scoring.spec import envelope as go

GO_DECODED = [
    ('', '<nil>', 'null'),
    ('+', 'string', '"+"'),
    ('+.5', 'float64', '0.5'),
    ('+.inf', 'error', 'json: unsupported value: +Inf'),
    ('+.nan', 'string', '"+.nan"'),
    ('+0x10', 'int', '16'),
    ('+1', 'int', '1'),
    ('+1e3', 'float64', '1000'),
    ('+_1', 'int', '1'),
    ('-.5', 'float64', '-0.5'),
    ('-.inf', 'error', 'json: unsupported value: -Inf'),
    ('-.nan', 'string', '"-.nan"'),
    ('-0', 'int', '0'),
    ('-0.0', 'float64', '-0'),
    ('-0b101', 'int', '-5'),
    ('-0x1f', 'int', '-31'),
    ('-1', 'int', '-1'),
    ('-1e3', 'float64', '-1000'),
    ('-1e400', 'string', '"-1e400"'),
    ('-9223372036854775808', 'int', '-9223372036854775808'),
    ('-9223372036854775809', 'float64', '-9223372036854776000'),
    ('.', 'string', '"."'),
    ('.5', 'float64', '0.5'),
    ('.5_0', 'float64', '0.5'),
    ('.5e1', 'float64', '5'),
    ('.INF', 'error', 'json: unsupported value: +Inf'),
    ('.Inf', 'error', 'json: unsupported value: +Inf'),
    ('.NAN', 'error', 'json: unsupported value: NaN'),
    ('.NaN', 'error', 'json: unsupported value: NaN'),
    ('.Nan', 'string', '".Nan"'),
    ('._5', 'string', '"._5"'),
    ('.inf', 'error', 'json: unsupported value: +Inf'),
    ('.nan', 'error', 'json: unsupported value: NaN'),
    ('0', 'int', '0'),
    ('0.0', 'float64', '0'),
    ('0.0000001', 'float64', '1e-7'),
    ('0.000001', 'float64', '0.000001'),
    ('0.1', 'float64', '0.1'),
    ('00', 'int', '0'),
    ('0026-01-01', 'time.Time', '"0026-01-01T00:00:00Z"'),
    ('0777', 'int', '511'),
    ('08', 'float64', '8'),
    ('09.5', 'float64', '9.5'),
    ('0B11', 'int', '3'),
    ('0O10', 'int', '8'),
    ('0X1F', 'int', '31'),
    ('0_0', 'int', '0'),
    ('0b101', 'int', '5'),
    ('0b2', 'string', '"0b2"'),
    ('0o10', 'int', '8'),
    ('0o8', 'string', '"0o8"'),
    ('0x', 'string', '"0x"'),
    ('0x10000000000000000', 'string', '"0x10000000000000000"'),
    ('0x1F', 'int', '31'),
    ('0xFFFFFFFFFFFFFFFF', 'uint64', '18446744073709551615'),
    ('0x_1F', 'int', '31'),
    ('1.', 'float64', '1'),
    ('1.5.3', 'string', '"1.5.3"'),
    ('1.5e', 'string', '"1.5e"'),
    ('1.e3', 'float64', '1000'),
    ('1000000', 'int', '1000000'),
    ('100000000000000000000', 'float64', '100000000000000000000'),
    ('1000000000000000000000', 'float64', '1e+21'),
    ('12026-01-01', 'string', '"12026-01-01"'),
    ('123456789012345678', 'int', '123456789012345678'),
    ('12:30', 'string', '"12:30"'),
    ('18446744073709551615', 'uint64', '18446744073709551615'),
    ('18446744073709551616', 'float64', '18446744073709552000'),
    ('1:2', 'string', '"1:2"'),
    ('1E3', 'float64', '1000'),
    ('1_', 'int', '1'),
    ('1_0.5', 'float64', '10.5'),
    ('1_000', 'int', '1000'),
    ('1__0', 'int', '10'),
    ('1e3', 'float64', '1000'),
    ('1e400', 'string', '"1e400"'),
    ('2023-02-29', 'string', '"2023-02-29"'),
    ('2024-02-29', 'time.Time', '"2024-02-29T00:00:00Z"'),
    ('2026-01-01', 'time.Time', '"2026-01-01T00:00:00Z"'),
    ('2026-01-01   10:00:00', 'time.Time', '"2026-01-01T10:00:00Z"'),
    ('2026-01-01 10:00:00', 'time.Time', '"2026-01-01T10:00:00Z"'),
    ('2026-01-01 10:00:00.25', 'time.Time', '"2026-01-01T10:00:00.25Z"'),
    ('2026-01-01 10:00:00Z', 'string', '"2026-01-01 10:00:00Z"'),
    ('2026-01-01T10:00:00+05:00', 'time.Time', '"2026-01-01T10:00:00+05:00"'),
    ('2026-01-01T10:00:00.1234567891Z', 'string', '"2026-01-01T10:00:00.1234567891Z"'),
    ('2026-01-01T10:00:00.123456789Z', 'time.Time', '"2026-01-01T10:00:00.123456789Z"'),
    ('2026-01-01T10:00:00.5Z', 'time.Time', '"2026-01-01T10:00:00.5Z"'),
    ('2026-01-01T10:00:00Z', 'time.Time', '"2026-01-01T10:00:00Z"'),
    ('2026-01-01T1:2:3Z', 'time.Time', '"2026-01-01T01:02:03Z"'),
    ('2026-01-01T24:00:00Z', 'string', '"2026-01-01T24:00:00Z"'),
    ('2026-01-01t10:00:00Z', 'time.Time', '"2026-01-01T10:00:00Z"'),
    ('2026-01-01x', 'string', '"2026-01-01x"'),
    ('2026-02-30', 'string', '"2026-02-30"'),
    ('2026-1-1', 'time.Time', '"2026-01-01T00:00:00Z"'),
    ('2026-13-01', 'string', '"2026-13-01"'),
    ('9223372036854775807', 'int', '9223372036854775807'),
    ('9223372036854775808', 'uint64', '9223372036854775808'),
    ('99999999999999999999', 'float64', '100000000000000000000'),
    ('<<', 'string', '"\\u003c\\u003c"'),
    ('=', 'string', '"="'),
    ('Infinity', 'string', '"Infinity"'),
    ('NO', 'string', '"NO"'),
    ('NULL', '<nil>', 'null'),
    ('NaN', 'string', '"NaN"'),
    ('Null', '<nil>', 'null'),
    ('TRUE', 'bool', 'true'),
    ('True', 'bool', 'true'),
    ('Yes', 'string', '"Yes"'),
    ('_1', 'string', '"_1"'),
    ('false', 'bool', 'false'),
    ('inf', 'string', '"inf"'),
    ('n', 'string', '"n"'),
    ('nan', 'string', '"nan"'),
    ('no', 'string', '"no"'),
    ('null', '<nil>', 'null'),
    ('off', 'string', '"off"'),
    ('on', 'string', '"on"'),
    ('tRue', 'string', '"tRue"'),
    ('true', 'bool', 'true'),
    ('y', 'string', '"y"'),
    ('yes', 'string', '"yes"'),
    ('~', '<nil>', 'null'),
]
GO_125 = {
    '2026-01-01T10:00:00.1234567891Z': ('time.Time', '"2026-01-01T10:00:00.123456789Z"'),
    '2026-01-01 10:00:00.99999999999': ('time.Time', '"2026-01-01T10:00:00.999999999Z"'),
}
"""Documented divergences from the Go 1.19 run: AgentClash ships Go 1.25, whose
``time.Parse`` (``time/format.go``, ``stdFracSecond9`` in ``parse``; ``parseNanoseconds``)
takes every fractional digit and truncates to nanoseconds, where Go 1.19 stopped at nine
and failed on the tenth."""


def decoded(text: str) -> Any:
    node = yamlv3.compose(f"v: {text}\n")
    assert node is not None
    return yamlv3.to_any(node, yamlv3.Decoder())["v"]


@pytest.mark.parametrize(("text", "go_type", "written"),
                         [(t, *GO_125.get(t, (g, w))) for t, g, w in GO_DECODED]
                         + [(t, *row) for t, row in GO_125.items()
                            if t not in {r[0] for r in GO_DECODED}],
                         ids=[repr(row[0]) for row in GO_DECODED]
                         + [repr(t) for t in GO_125 if t not in {r[0] for r in GO_DECODED}])
def test_scalars_resolve_and_marshal_as_yaml_v3_does(text: str, go_type: str,
                                                     written: str) -> None:
    """Every scalar of the reference table decodes to what yaml.v3 gave and writes as
    ``json.Marshal`` wrote it (or fails to write, for NaN and ±Inf)."""
    value = decoded(text)
    if go_type == "error":
        with pytest.raises(yamlv3.MarshalError) as raised:
            yamlv3.to_json(value)
        assert written == str(raised.value)
        return
    converted = yamlv3.to_json(value)
    assert json.loads(written) == converted
    assert type(json.loads(written)) is type(converted)


@pytest.mark.parametrize(("text", "expected"), [
    ("'no'", "no"), ('"0777"', "0777"), ("!!str 5", "5"), ("! 5", 5), ("!!float 5", 5.0),
    ("|\n  12:30\n", "12:30\n"), ("!!int 0x10", 16), ("!!binary aGk=", "hi"),
], ids=["single-quoted", "double-quoted", "explicit-str", "non-specific-tag-resolves",
        "float-tag-on-int", "block-scalar", "explicit-int", "binary"])
def test_quoting_and_tags(text: str, expected: Any) -> None:
    """Quoted and block scalars are strings; ``!`` is no tag (decode.go ``p.node``);
    ``!!float`` takes an int (resolve.go's deferred check); ``!!binary`` is base64."""
    assert expected == decoded(text)


def test_an_explicit_tag_the_text_cannot_be_is_an_error() -> None:
    """``!!int abc`` fails as yaml.v3's ``cannot decode !!str `abc` as a !!int``."""
    with pytest.raises(yamlv3.YAMLError, match=r"cannot decode !!str `abc` as a !!int"):
        decoded("!!int abc")


def test_duplicate_keys_are_errors_naming_both_lines() -> None:
    """decode.go: ``line 3: mapping key "weight" already defined at line 2``."""
    node = yamlv3.compose("a:\n  weight: 1\n  weight: 2\n")
    assert node is not None
    decoder = yamlv3.Decoder()
    yamlv3.to_any(node, decoder)
    assert decoder.errors == [(3, "a", 'mapping key "weight" already defined at line 2')]


def test_keys_that_differ_only_in_quoting_are_duplicates() -> None:
    """yaml.v3 compares the keys' raw text: ``1`` and ``"1"`` are the same key."""
    node = yamlv3.compose('1: a\n"1": b\n')
    assert node is not None
    decoder = yamlv3.Decoder()
    yamlv3.to_any(node, decoder)
    assert [e[2] for e in decoder.errors] == ["mapping key \"1\" already defined at line 1"]


def test_merge_keys_never_override_the_mappings_own_keys() -> None:
    """``<<`` merges (decode.go ``merge``): own keys win, then the first merged map."""
    text = "b: &b {x: 1, y: 1}\nc: &c {y: 2, z: 2}\nd:\n  <<: [*b, *c]\n  x: 0\n"
    node = yamlv3.compose(text)
    assert node is not None
    assert yamlv3.to_any(node, yamlv3.Decoder())["d"] == {"x": 0, "y": 1, "z": 2}


def test_an_anchor_containing_itself_is_an_error() -> None:
    """decode.go: ``anchor 'a' value contains itself``."""
    node = yamlv3.compose("a: &a [*a]\n")
    assert node is not None
    with pytest.raises(yamlv3.YAMLError, match="anchor 'a' value contains itself"):
        yamlv3.to_any(node, yamlv3.Decoder())


def test_excessive_aliasing_is_refused() -> None:
    """A billion-laughs document fails as yaml.v3 fails it, without expanding it."""
    lines = ["l0: &l0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 10) + "]" for i in range(1, 9)]
    node = yamlv3.compose("\n".join(lines) + "\n")
    assert node is not None
    with pytest.raises(yamlv3.YAMLError, match="document contains excessive aliasing"):
        yamlv3.to_any(node, yamlv3.Decoder())


def test_non_string_keys_cannot_be_written_to_json() -> None:
    """A nested mapping with an int key is ``map[interface{}]interface{}``: json.Marshal
    refuses it, so AgentClash cannot load such a spec."""
    with pytest.raises(yamlv3.MarshalError, match=r"unsupported type: map\[interface \{\}\]"):
        yamlv3.to_json(decoded("{1: x}"))


def test_only_the_first_document_is_read() -> None:
    """yaml.go ``unmarshal`` parses one document: what follows is never even scanned."""
    node = yamlv3.compose("a: 1\n---\n{broken: [\n")
    assert node is not None
    assert yamlv3.to_any(node, yamlv3.Decoder()) == {"a": 1}

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
