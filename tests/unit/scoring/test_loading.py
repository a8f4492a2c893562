"""Loading specs and packs (scoring-semantics §2.1, §3): sources, strict decoding, errors.

A bare ``evaluation_spec`` or a whole challenge pack, as a path, text (JSON or YAML) or a
mapping; unknown fields and trailing data rejected; YAML findings carry their line;
``str(SpecError)`` joins findings AgentClash's way.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from scoring import Pack, SpecError, load_pack, load_spec
from scoring.errors import FieldError
from scoring.loading import parse_text
from scoring.spec import EvaluationSpec

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


# --- sources ------------------------------------------------------------------------------


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


SOURCES = {
    "mapping": lambda tmp: SPEC,
    "wrapped-mapping": lambda tmp: {"evaluation_spec": SPEC},
    "json-text": lambda tmp: json.dumps(SPEC),
    "json-text-leading-whitespace": lambda tmp: "\n  " + json.dumps(SPEC, indent=2),
    "yaml-text": lambda tmp: SPEC_YAML,
    "wrapped-yaml-text": lambda tmp: "evaluation_spec:\n" + "".join(
        f"  {line}\n" for line in SPEC_YAML.splitlines()),
    "path-object-yaml": lambda tmp: _write(tmp, "spec.yaml", SPEC_YAML),
    "path-object-yml": lambda tmp: _write(tmp, "spec.yml", SPEC_YAML),
    "path-object-json": lambda tmp: _write(tmp, "spec.json", json.dumps(SPEC)),
    "path-string-yaml": lambda tmp: str(_write(tmp, "spec.yaml", SPEC_YAML)),
    "path-string-json": lambda tmp: str(_write(tmp, "spec.json", json.dumps(SPEC))),
    "path-string-yaml-flow-style": lambda tmp: str(_write(tmp, "flow.yaml", json.dumps(SPEC))),
    "pack-path": lambda tmp: _write(tmp, "pack.yaml", PACK_YAML),
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


def test_pack_cases_come_from_the_first_input_set() -> None:
    """A pack's cases are those of its first input set, in order, in pack form."""
    pack = load_pack(PACK_YAML)
    assert [c.case_key for c in pack.cases] == ["first", "second"]
    first = pack.cases[0]
    assert first.challenge_key == "sum"
    assert first.payload == {"question": "1+1", "asked": "2026-01-01"}
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
                "input_sets": [{"cases": [{"case_key": "only", "payload": {}}]}]}
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
    ("pack-version-not-object", {"version": 3}, [("version.evaluation_spec", "is required")]),
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


# --- strict decoding ----------------------------------------------------------------------

E = "evaluation_spec"
UNKNOWN_FIELDS = [
    ("top-level", spec_body(gait=1), f"{E}.gait", "gait"),
    ("validator", spec_body(validators=[{**SPEC["validators"][0], "wieght": 2}]),
     f"{E}.validators[0].wieght", "wieght"),
    ("scorecard", spec_body(scorecard={"dimensions": ["correctness"], "pas_threshold": 0.5}),
     f"{E}.scorecard.pas_threshold", "pas_threshold"),
    ("dimension-wieght", spec_body(scorecard={"dimensions": [{"key": "correctness",
                                                              "wieght": 2}]}),
     f"{E}.scorecard.dimensions[0].wieght", "wieght"),
    ("dimension-gait", spec_body(scorecard={"dimensions": ["correctness",
                                                           {"key": "cost", "gait": True}]}),
     f"{E}.scorecard.dimensions[1].gait", "gait"),
    ("dimension-pas-threshold", spec_body(scorecard={"dimensions": [
        {"key": "correctness", "gate": True, "pas_threshold": 1}]}),
     f"{E}.scorecard.dimensions[0].pas_threshold", "pas_threshold"),
    ("dimension-envelope", spec_body(scorecard={"dimensions": [
        {"key": "latency", "normalization": {"target": 1, "maximum": 2}}]}),
     f"{E}.scorecard.dimensions[0].normalization.maximum", "maximum"),
    ("legacy-normalization", spec_body(scorecard={"dimensions": ["correctness"], "normalization":
                                                  {"latency": {"target_ms": 1, "max": 2}}}),
     f"{E}.scorecard.normalization.latency.max", "max"),
    ("runtime-limits", spec_body(runtime_limits={"max_tokens": 5}),
     f"{E}.runtime_limits.max_tokens", "max_tokens"),
    ("post-execution-check", spec_body(post_execution_checks=[
        {"key": "out", "type": "file_capture", "path": "/x", "max_bytes": 1}]),
     f"{E}.post_execution_checks[0].max_bytes", "max_bytes"),
    ("metric", spec_body(metrics=[{"key": "m", "type": "numeric", "collector": "c",
                                   "units": "ms"}]),
     f"{E}.metrics[0].units", "units"),
    ("behavioral-signal", spec_body(behavioral={"signals": [{"key": "error_cascade",
                                                            "wieght": 1}]}),
     f"{E}.behavioral.signals[0].wieght", "wieght"),
    ("pricing-row", spec_body(pricing={"models": [{"provider_key": "openai",
                                                    "provider_model_id": "gpt-4o",
                                                    "input_cost": 1}]}),
     f"{E}.pricing.models[0].input_cost", "input_cost"),
    ("judge-consensus", spec_body(llm_judges=[{"key": "j", "consensus": {"method": "mean"}}]),
     f"{E}.llm_judges[0].consensus.method", "method"),
    ("judge-limits", spec_body(scorecard={"dimensions": ["correctness"],
                                          "judge_limits": {"max_calls": 1}}),
     f"{E}.scorecard.judge_limits.max_calls", "max_calls"),
]


@pytest.mark.parametrize(("case", "body", "field", "name"), UNKNOWN_FIELDS,
                         ids=[u[0] for u in UNKNOWN_FIELDS])
def test_unknown_fields_are_rejected(case: str, body: dict[str, Any], field: str,
                                     name: str) -> None:
    """An unknown field at any depth of the spec is rejected, naming the field."""
    assert errors_of(body) == [(field, f'unknown field "{name}"')]


def test_decoding_findings_are_collected() -> None:
    """Several decoding problems are all reported, not just the first."""
    body = spec_body(version_number="1", gait=True,
                     scorecard={"dimensions": [{"key": "correctness", "wieght": 1}]})
    assert errors_of(body) == [
        (f"{E}.version_number", "must be an integer"),
        (f"{E}.scorecard.dimensions[0].wieght", 'unknown field "wieght"'),
        (f"{E}.gait", 'unknown field "gait"'),
    ]


WRONG_TYPES = [
    ("version-as-string", {"version_number": "1"}, f"{E}.version_number", "must be an integer"),
    ("version-as-float", {"version_number": 1.5}, f"{E}.version_number", "must be an integer"),
    ("version-as-bool", {"version_number": True}, f"{E}.version_number", "must be an integer"),
    ("name-as-number", {"name": 5}, f"{E}.name", "must be a string"),
    ("validators-as-object", {"validators": {}}, f"{E}.validators", "must be a list"),
    ("scorecard-as-list", {"scorecard": []}, f"{E}.scorecard", "must be an object"),
    ("dimension-as-number", {"scorecard": {"dimensions": [5]}}, f"{E}.scorecard.dimensions[0]",
     "must be an object"),
    ("weight-as-string", {"scorecard": {"dimensions": [{"key": "correctness", "weight": "2"}]}},
     f"{E}.scorecard.dimensions[0].weight", "must be a number"),
    ("gate-as-string", {"scorecard": {"dimensions": [{"key": "correctness", "gate": "yes"}]}},
     f"{E}.scorecard.dimensions[0].gate", "must be a boolean"),
]


@pytest.mark.parametrize(("case", "fields", "field", "message"), WRONG_TYPES,
                         ids=[w[0] for w in WRONG_TYPES])
def test_wrong_json_types_are_rejected(case: str, fields: dict[str, Any], field: str,
                                       message: str) -> None:
    """JSON values of the wrong type are rejected at their path, without coercion."""
    assert errors_of(spec_body(**fields)) == [(field, message)]


def test_integers_are_accepted_for_number_fields() -> None:
    """An integral JSON number is a valid float field (weights, costs, thresholds)."""
    spec = load_spec(spec_body(runtime_limits={"max_cost_usd": 2},
                               scorecard={"dimensions": [{"key": "correctness", "weight": 2,
                                                          "gate": True, "pass_threshold": 1}]}))
    assert spec.scorecard.dimensions[0].weight == 2
    assert spec.runtime_limits is not None and spec.runtime_limits.max_cost_usd == 2


@pytest.mark.parametrize("config", [[1, 2], "text", {"anything": {"goes": True}}, None],
                         ids=["list", "string", "object", "null"])
def test_ignored_validator_config_is_opaque(config: Any) -> None:
    """Validator config is raw JSON at decoding; an ignored-config type accepts any value."""
    body = spec_body(validators=[{**SPEC["validators"][0], "config": config}])
    assert load_spec(body).validators[0].config == config


def test_lenient_file_validator_config_loads() -> None:
    """file_content_match with the shipped packs' wrong key ``{mode: contains}`` loads fine."""
    text = SPEC_YAML.replace("validators:\n", """\
post_execution_checks:
  - {key: out, type: file_capture, path: /workspace/out.txt}
validators:
  - key: file
    type: file_content_match
    target: file:out
    expected_from: literal:done
    config:
      mode: contains
""")
    spec = load_spec(text)
    assert spec.validators[0].config == {"mode": "contains"}


# --- JSON and YAML text -------------------------------------------------------------------

TEXT_ERRORS = [
    ("json-trailing-value", json.dumps(SPEC) + " {}",
     "unexpected trailing data after JSON value"),
    ("json-trailing-word", json.dumps(SPEC) + "\nextra",
     "unexpected trailing data after JSON value"),
    ("json-two-objects-glued", json.dumps(SPEC) + json.dumps(SPEC),
     "unexpected trailing data after JSON value"),
    ("yaml-two-documents", SPEC_YAML + "---\nname: second\n",
     "unexpected trailing data after YAML document"),
    ("yaml-leading-marker-two-documents", "---\n" + SPEC_YAML + "---\n" + SPEC_YAML,
     "unexpected trailing data after YAML document"),
]


@pytest.mark.parametrize(("case", "text", "message"), TEXT_ERRORS,
                         ids=[t[0] for t in TEXT_ERRORS])
def test_trailing_data_is_rejected(case: str, text: str, message: str) -> None:
    """Anything after the single JSON value or YAML document is rejected."""
    assert errors_of(text) == [("manifest", message)]


def test_yaml_second_document_line_is_reported() -> None:
    """The multi-document rejection points at the first content line of the second document."""
    marker = SPEC_YAML.count("\n") + 1
    assert lines_of(SPEC_YAML + "---\nname: second\n") == [("manifest", marker + 1)]


@pytest.mark.parametrize("text", [
    json.dumps(SPEC) + "\n\n   \t", "---\n" + SPEC_YAML, SPEC_YAML + "...\n",
], ids=["json-trailing-whitespace", "yaml-leading-marker", "yaml-end-marker"])
def test_single_document_with_markers_or_whitespace_loads(text: str) -> None:
    """Trailing whitespace after JSON, and YAML document markers around one document, load."""
    assert load_spec(text).name == "demo"


def test_invalid_json_is_reported_with_its_line() -> None:
    """Malformed JSON is an ``invalid JSON`` finding on the manifest with the error line."""
    with pytest.raises(SpecError) as raised:
        load_spec('{\n  "name": "x",\n}')
    [error] = raised.value.errors
    assert error.field == "manifest"
    assert error.message.startswith("invalid JSON: ")
    assert error.line == 3


def test_invalid_yaml_is_reported_with_its_line() -> None:
    """Malformed YAML is an ``invalid YAML`` finding on the manifest with the error line."""
    with pytest.raises(SpecError) as raised:
        load_spec("name: demo\nvalidators: [\n")
    [error] = raised.value.errors
    assert error.field == "manifest"
    assert error.message.startswith("invalid YAML: ")
    assert error.line == 3


def test_parse_text_returns_data_and_lines() -> None:
    """parse_text gives the decoded YAML and the line of every key and sequence item."""
    data, lines = parse_text("a: 1\nb:\n  - x\n  - {c: 2}\n")
    assert data == {"a": 1, "b": ["x", {"c": 2}]}
    assert lines == {"a": 1, "b": 2, "b[0]": 3, "b[1]": 4, "b[1].c": 4}


def test_parse_text_json_has_no_lines() -> None:
    """JSON text parses without a line map."""
    assert parse_text('{"a": [1]}') == ({"a": [1]}, {})


def test_yaml_timestamps_stay_strings() -> None:
    """YAML dates decode to their text, as JSON has no timestamp type."""
    data, _ = parse_text("at: 2026-01-01\nwhen: 2026-01-01T10:00:00Z\n")
    assert data == {"at": "2026-01-01", "when": "2026-01-01T10:00:00Z"}


# --- YAML line numbers --------------------------------------------------------------------


def test_yaml_unknown_field_has_its_line() -> None:
    """A strict-decoding finding from YAML names the line of the unknown field."""
    text = SPEC_YAML.replace("    type: exact_match\n", "    type: exact_match\n    wieght: 2\n")
    assert lines_of(text) == [(f"{E}.validators[0].wieght", 7)]


def test_yaml_validation_findings_have_their_lines() -> None:
    """Validation findings from YAML carry the line of the offending field."""
    text = SPEC_YAML.replace("version_number: 1", "version_number: 0").replace(
        "target: final_output", "target: output")
    assert lines_of(text) == [(f"{E}.version_number", 2), (f"{E}.validators[0].target", 7)]


def test_yaml_missing_field_uses_the_nearest_parent_line() -> None:
    """A finding on an absent field takes the line of its closest present parent."""
    text = SPEC_YAML.replace("    expected_from: case.expectations.answer\n", "")
    assert lines_of(text) == [(f"{E}.validators[0].expected_from", 5)]


def test_yaml_finding_without_any_located_parent_has_no_line() -> None:
    """A finding whose path has no YAML location (absent top-level field) has no line."""
    text = SPEC_YAML.replace("name: demo\n", "")
    assert lines_of(text) == [(f"{E}.name", None)]


def test_yaml_pack_findings_have_lines() -> None:
    """Pack findings from YAML carry the line within the whole pack file."""
    text = PACK_YAML.replace("        target: final_output", "        target: nowhere")
    assert lines_of(text) == [("version.evaluation_spec.validators[0].target", 14)]


def test_yaml_wrapped_spec_findings_have_lines() -> None:
    """Findings in a YAML ``evaluation_spec:`` wrapper carry lines too."""
    text = "evaluation_spec:\n" + "".join(f"  {line}\n" for line in SPEC_YAML.splitlines())
    text = text.replace("judge_mode: deterministic", "judge_mode: auto")
    assert lines_of(text) == [(f"{E}.judge_mode", 4)]


@pytest.mark.parametrize("source", [spec_body(version_number=0),
                                    json.dumps(spec_body(version_number=0))],
                         ids=["mapping", "json"])
def test_non_yaml_findings_have_no_line(source: Any) -> None:
    """Findings from a mapping or JSON text have no line."""
    assert lines_of(source) == [(f"{E}.version_number", None)]


# --- files --------------------------------------------------------------------------------


@pytest.mark.parametrize("source", [Path("/nonexistent/spec.yaml"), "/nonexistent/spec.yaml",
                                    "missing.json"],
                         ids=["path-object", "path-string", "relative-json-name"])
def test_unreadable_path(source: Any) -> None:
    """A path that cannot be read is a ``manifest cannot be read`` finding naming the path."""
    [(field, message)] = errors_of(source)
    assert field == "manifest"
    assert message.startswith("cannot be read: ") and message.endswith(str(source))


def test_long_single_line_text_is_text_not_a_path() -> None:
    """A long one-line YAML text is parsed as text (no file-name error)."""
    assert errors_of("name: " + "x" * 400 + "\n")[0] == (f"{E}.version_number",
                                                          "must be greater than 0")


def test_yaml_file_findings_have_lines(tmp_path: Path) -> None:
    """Findings from a YAML file carry lines like YAML text does."""
    path = _write(tmp_path, "spec.yaml", SPEC_YAML.replace("judge_mode: deterministic",
                                                           "judge_mode: none"))
    assert lines_of(path) == [(f"{E}.judge_mode", 3)]


# --- SpecError ----------------------------------------------------------------------------


def test_spec_error_string_joins_field_and_message() -> None:
    """str(SpecError) is ``"<field> <message>"`` joined by ``"; "``, without lines."""
    text = SPEC_YAML.replace("name: demo", "name: ''").replace("version_number: 1",
                                                                "version_number: -1")
    with pytest.raises(SpecError) as raised:
        load_spec(text)
    assert str(raised.value) == (
        "evaluation_spec.name is required; evaluation_spec.version_number must be greater than 0")
    assert [e.line for e in raised.value.errors] == [1, 2]


@pytest.mark.parametrize(("errors", "expected"), [
    ([FieldError("a.b", "is required")], "a.b is required"),
    ([FieldError("a", "x", 3), FieldError("b[0].c", "y z")], "a x; b[0].c y z"),
    ([], ""),
], ids=["one", "two-with-line", "none"])
def test_spec_error_format(errors: list[FieldError], expected: str) -> None:
    """SpecError keeps its findings in ``errors`` and joins them AgentClash's way."""
    error = SpecError(errors)
    assert error.errors == errors
    assert str(error) == expected


def test_field_error_string_includes_the_line() -> None:
    """A single FieldError prints its line when known (for CLI output)."""
    assert str(FieldError("f", "m", 7)) == "f m (line 7)"
    assert str(FieldError("f", "m")) == "f m"


def test_spec_error_single() -> None:
    """SpecError.single builds an error with one finding."""
    error = SpecError.single("manifest", "is required", 2)
    assert error.errors == [FieldError("manifest", "is required", 2)]
    assert str(error) == "manifest is required"
