"""Load-time validation of validators and post-execution checks: keys, types, targets,
expected_from, file targets and the generic config handling (docs/scoring.md §3).

The builders and stand-in kinds are in ``spec_builders``; its ``kinds`` fixture
registers them for every test here.
"""

from __future__ import annotations

from typing import Any

import pytest
from spec_builders import (  # noqa: F401  (kinds: an autouse fixture)
    CODE,
    POST,
    TOOL,
    Finding,
    V,
    _ids,
    body,
    capture,
    findings,
    kinds,
    validator,
)

VALIDATORS = [
    ("key-blank", [validator(key=" ")], [(f"{V}[0].key", "is required")]),
    ("key-duplicate", [validator(), validator(), validator()],
     [(f"{V}[1].key", "must be unique"), (f"{V}[2].key", "must be unique")]),
    ("key-duplicate-after-trim", [validator(key="v"), validator(key=" v ")],
     [(f"{V}[1].key", "must be unique")]),
    ("type-unknown", [validator(vtype="exact_mtach")],
     [(f"{V}[0].type", "is not a supported validator type")]),
    ("type-unknown-still-checks-references",
     [validator(vtype="nope", target="", expected_from="bogus")],
     [(f"{V}[0].type", "is not a supported validator type"),
      (f"{V}[0].target", "is required"),
      (f"{V}[0].expected_from", "must be a supported evidence reference")]),
    ("target-missing", [validator(target="")], [(f"{V}[0].target", "is required")]),
    ("target-blank", [validator(target="  ")], [(f"{V}[0].target", "is required")]),
    ("target-unsupported", [validator(target="output")],
     [(f"{V}[0].target", "must be a supported evidence reference")]),
    ("target-tool-calls-on-contains", [validator(target="tool_calls")],
     [(f"{V}[0].target", "must be a supported evidence reference")]),
    ("target-empty-dotted-segment", [validator(target="case.payload..answer")],
     [(f"{V}[0].target", "must be a supported evidence reference")]),
    ("target-file-blank-key", [validator(target="file: ")],
     [(f"{V}[0].target", "must be a supported evidence reference")]),
    ("target-last-n-zero", [validator(target="transcript.last_n:0")],
     [(f"{V}[0].target", "must be a supported evidence reference")]),
    ("target-last-n-three", [validator(target="transcript.last_n:3")], []),
    ("target-case-expectation", [validator(target="case.expectations.answer")], []),
    ("expected-from-missing", [validator(expected_from=None)],
     [(f"{V}[0].expected_from", "is required")]),
    ("expected-from-unsupported", [validator(expected_from="answer")],
     [(f"{V}[0].expected_from", "must be a supported evidence reference")]),
    ("expected-from-empty-literal", [validator(expected_from="literal:")], []),
    ("expected-from-file-without-checks", [validator(expected_from="file:gold")], []),
]


FILE_VALIDATORS = [
    ("content-match-needs-file-prefix",
     [validator(vtype="file_content_match", target="final_output")], [],
     [(f"{V}[0].target", "must use file: prefix for file validators")]),
    ("unsupported-and-not-file-both-reported",
     [validator(vtype="file_content_match", target="output")], [],
     [(f"{V}[0].target", "must be a supported evidence reference"),
      (f"{V}[0].target", "must use file: prefix for file validators")]),
    ("content-match-needs-expected-from",
     [validator(vtype="file_content_match", target="file:out", expected_from=None)], [],
     [(f"{V}[0].expected_from", "is required")]),
    ("file-exists-needs-file-prefix",
     [validator(vtype="file_exists", target="final_output", expected_from=None)], [],
     [(f"{V}[0].target", "must use file: prefix for file validators")]),
    ("file-exists-expected-from-ignored",
     [validator(vtype="file_exists", target="file:out", expected_from="not a reference")], [],
     []),
    ("file-json-schema-expected-from-optional",
     [validator(vtype="file_json_schema", target="file:out", expected_from=None)], [], []),
    ("directory-structure-needs-file-prefix",
     [validator(vtype="directory_structure", target="case.payload", expected_from=None)], [],
     [(f"{V}[0].target", "must use file: prefix for file validators")]),
    ("no-checks-file-target-not-cross-checked",
     [validator(vtype="file_content_match", target="file:anything")], [], []),
    ("checks-declared-unknown-key-on-file-validator",
     [validator(vtype="file_exists", target="file:missing", expected_from=None)],
     [capture("out")],
     [(f"{V}[0].target", 'references unknown post_execution_check key "missing"')]),
    ("checks-declared-unknown-key-on-contains",
     [validator(target="file:nope")], [capture("out")],
     [(f"{V}[0].target", 'references unknown post_execution_check key "nope"')]),
    ("checks-declared-known-key",
     [validator(target="file:out"), validator("w", "file_content_match", "file:out")],
     [capture("out")], []),
    ("code-execution-without-checks",
     [validator(vtype="code_execution", target="file:src", expected_from=None, config=CODE)],
     [], [(f"{V}[0].target", 'references unknown post_execution_check key "src"')]),
    ("code-execution-unknown-check",
     [validator(vtype="code_execution", target="file:src", expected_from=None, config=CODE)],
     [capture("out")],
     [(f"{V}[0].target", 'references unknown post_execution_check key "src"'),
      (f"{V}[0].target", 'references unknown post_execution_check key "src"')]),
    ("code-execution-needs-file-capture",
     [validator(vtype="code_execution", target="file:tree", expected_from=None, config=CODE)],
     [capture("tree", "directory_listing", "/work")],
     [(f"{V}[0].target", "must reference a file_capture post_execution_check")]),
    ("code-execution-on-file-capture",
     [validator(vtype="code_execution", target="file:src", expected_from=None, config=CODE)],
     [capture("src")], []),
    ("code-execution-needs-file-prefix",
     [validator(vtype="code_execution", target="final_output", expected_from=None,
                config=CODE)], [capture("src")],
     [(f"{V}[0].target", "must use file: prefix for file validators"),
      (f"{V}[0].target", 'references unknown post_execution_check key "final_output"')]),
    ("postcondition-needs-a-check",
     [validator(vtype="postcondition", target="file:out", expected_from=None, config=POST)],
     [], [(f"{V}[0].target", 'references unknown post_execution_check key "out"')]),
    ("postcondition-with-check",
     [validator(vtype="postcondition", target="file:out", expected_from=None, config=POST)],
     [capture("out")], []),
    ("postcondition-expected-from-omitted",
     [validator(vtype="postcondition", target="file:out", config=POST)], [capture("out")],
     [(f"{V}[0].expected_from", "must be omitted for postcondition validators")]),
]


TOOL_CALLS = [
    ("target-must-be-tool-calls",
     [validator(vtype="tool_call_assertion", target="final_output", expected_from=None,
                config=TOOL)],
     [(f"{V}[0].target", 'must be "tool_calls" for tool_call_assertion validators')]),
    ("target-required", [validator(vtype="tool_call_assertion", target="", expected_from=None,
                                   config=TOOL)],
     [(f"{V}[0].target", "is required")]),
    ("expected-from-must-be-omitted",
     [validator(vtype="tool_call_assertion", target="tool_calls", config=TOOL)],
     [(f"{V}[0].expected_from", "must be omitted for tool_call_assertion validators")]),
    ("config-required",
     [validator(vtype="tool_call_assertion", target="tool_calls", expected_from=None)],
     [(f"{V}[0].config", "tool_call_assertion config is required")]),
    ("valid", [validator(vtype="tool_call_assertion", target="tool_calls", expected_from=None,
                         config=TOOL)], []),
]


CONFIGS = [
    ("strict-unknown-key", validator(vtype="x_strict", config={"treshold": 0.5}),
     [(f"{V}[0].config", 'invalid JSON: json: unknown field "treshold"')]),
    ("strict-rules-get-config-path", validator(vtype="x_strict", config={"threshold": 2}),
     [(f"{V}[0].config.threshold", "must be between 0 and 1")]),
    ("strict-absent-config-uses-defaults", validator(vtype="x_strict"), []),
    ("lenient-config-not-checked-at-load", validator(vtype="x_lenient_required"), []),
    ("lenient-unknown-keys-ignored",
     validator(vtype="x_lenient_required", config={"mode": "contains", "extra": [1]}), []),
    ("file-content-match-mode-typo-is-lenient",
     validator(vtype="file_content_match", target="file:out", config={"mode": "contains"}), []),
    ("ignored-config-never-read", validator(vtype="exact_match", config="not even an object"),
     []),
]


CHECKS = [
    ("key-blank", [capture(" ")], [("evaluation_spec.post_execution_checks[0].key",
                                    "is required")]),
    ("key-duplicate", [capture("a"), capture("a")],
     [("evaluation_spec.post_execution_checks[1].key", "must be unique")]),
    ("type-unknown", [capture(ctype="file")],
     [("evaluation_spec.post_execution_checks[0].type",
       "must be file_capture or directory_listing")]),
    ("path-blank", [capture(path="  ")],
     [("evaluation_spec.post_execution_checks[0].path", "is required")]),
    ("max-size-negative", [capture(max_size_bytes=-1)],
     [("evaluation_spec.post_execution_checks[0].max_size_bytes",
       "must be greater than or equal to 0")]),
    ("max-size-zero", [capture(max_size_bytes=0)], []),
    ("listing-recursive", [capture("tree", "directory_listing", "/w", recursive=True)], []),
]


@pytest.mark.parametrize(("case", "decls", "expected"), VALIDATORS, ids=_ids(VALIDATORS))
def test_validator_rules(case: str, decls: list[dict[str, Any]],
                         expected: list[Finding]) -> None:
    """Validator key, type, target and expected_from rules report their exact findings."""
    assert findings(body(validators=decls)) == expected


@pytest.mark.parametrize(("case", "decls", "checks", "expected"), FILE_VALIDATORS,
                         ids=_ids(FILE_VALIDATORS))
def test_file_targets(case: str, decls: list[dict[str, Any]], checks: list[dict[str, Any]],
                      expected: list[Finding]) -> None:
    """File validators need file: targets that cross-reference declared post-execution checks."""
    assert findings(body(validators=decls, post_execution_checks=checks)) == expected


@pytest.mark.parametrize(("case", "decls", "expected"), TOOL_CALLS, ids=_ids(TOOL_CALLS))
def test_tool_call_assertion_generic_rules(case: str, decls: list[dict[str, Any]],
                                           expected: list[Finding]) -> None:
    """tool_call_assertion targets exactly tool_calls, omits expected_from, needs a config."""
    assert findings(body(validators=decls)) == expected


@pytest.mark.parametrize(("case", "decl", "expected"), CONFIGS, ids=_ids(CONFIGS))
def test_config_handling(case: str, decl: dict[str, Any], expected: list[Finding]) -> None:
    """Configs: required check, strict decoding at ...config, config_rules, lenient, ignored."""
    checks = [capture("out")] if decl["target"].startswith("file:") else []
    assert findings(body(validators=[decl], post_execution_checks=checks)) == expected


def test_strict_config_error_names_unknown_field_for_registered_kind() -> None:
    """A registered strict kind reports an unknown config key at ...config, naming the key."""
    decl = validator(vtype="tool_call_assertion", target="tool_calls", expected_from=None,
                     config={**TOOL, "tool_nme": "search"})
    [(field, message)] = findings(body(validators=[decl]))
    assert field == f"{V}[0].config"
    assert "unknown field" in message and "tool_nme" in message


def test_strict_config_that_is_not_an_object_is_a_config_finding() -> None:
    """A strict config that does not decode as an object is reported as invalid JSON."""
    [(field, message)] = findings(body(validators=[validator(vtype="x_strict", config=[1])]))
    assert field == f"{V}[0].config"
    assert message.startswith("invalid JSON: ")


@pytest.mark.parametrize(("case", "checks", "expected"), CHECKS, ids=_ids(CHECKS))
def test_post_execution_checks(case: str, checks: list[dict[str, Any]],
                               expected: list[Finding]) -> None:
    """Post-execution checks: key required/unique, type, path, max_size_bytes ≥ 0."""
    assert findings(body(post_execution_checks=checks)) == expected
