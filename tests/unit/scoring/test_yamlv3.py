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

from evalfleet.scoring.compat import yamlv3

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
