"""Loading from text and files: JSON/YAML parsing, trailing data, YAML line numbers on
findings, unreadable paths, and how SpecError prints its findings.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from load_helpers import PACK_YAML, SPEC, SPEC_YAML, E, errors_of, lines_of, spec_body, write_file

from evalfleet.scoring import SpecError, load_spec
from evalfleet.scoring.errors import FieldError
from evalfleet.scoring.spec.loading import parse_json

# --- JSON and YAML text -------------------------------------------------------------------

TEXT_ERRORS = [
    ("json-trailing-value", json.dumps(SPEC) + " {}",
     "unexpected trailing data after JSON value"),
    ("json-trailing-word", json.dumps(SPEC) + "\nextra",
     "unexpected trailing data after JSON value"),
    ("json-two-objects-glued", json.dumps(SPEC) + json.dumps(SPEC),
     "unexpected trailing data after JSON value"),
]


@pytest.mark.parametrize(("case", "text", "message"), TEXT_ERRORS,
                         ids=[t[0] for t in TEXT_ERRORS])
def test_trailing_data_is_rejected(case: str, text: str, message: str) -> None:
    """Anything after the single JSON value or YAML document is rejected."""
    assert errors_of(text) == [("manifest", message)]


@pytest.mark.parametrize("text", [
    SPEC_YAML + "---\nname: second\n", "---\n" + SPEC_YAML + "---\n" + SPEC_YAML,
    SPEC_YAML + "---\n{unclosed: [\n",
], ids=["second-document", "leading-marker-two-documents", "broken-second-document"])
def test_yaml_documents_after_the_first_are_not_read(text: str) -> None:
    """yaml.v3's Unmarshal decodes the first document only; the rest is never parsed."""
    assert load_spec(text).name == "demo"


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


def test_parse_json_keeps_integers_and_refuses_what_go_refuses() -> None:
    """JSON text is one value; integers stay integers; NaN/Infinity are not JSON."""
    assert parse_json('{"a": [1, 1.5]}') == {"a": [1, 1.5]}
    for text in ('{"a": NaN}', '{"a": Infinity}', '{"a": -Infinity}'):
        with pytest.raises(SpecError) as raised:
            parse_json(text)
        assert raised.value.errors[0].message.startswith("invalid JSON: invalid character")


def test_yaml_timestamps_become_rfc3339_text() -> None:
    """A YAML date in the spec is a yaml.v3 timestamp, written to JSON as RFC 3339 text."""
    spec = load_spec(SPEC_YAML.replace("name: demo", "name: 2026-01-01"))
    assert spec.name == "2026-01-01T00:00:00Z"

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
    path = write_file(tmp_path, "spec.yaml", SPEC_YAML.replace("judge_mode: deterministic",
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
