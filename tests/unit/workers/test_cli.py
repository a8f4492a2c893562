"""End-to-end tests of ``evalfleet validate`` and ``evalfleet score`` on the example packs."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from evalfleet.workers.cli import main

PACKS = Path(__file__).parents[3] / "examples" / "packs"


def invoke(*args: str) -> Any:
    """Run the CLI in-process, keeping stdout and stderr apart."""
    return CliRunner().invoke(main, list(args))


def score(pack: str, events: str, *extra: str) -> dict[str, Any]:
    """The scorecard JSON of one example run."""
    result = invoke("score", "--spec", str(PACKS / pack / "pack.yaml"),
                    "--events", str(PACKS / pack / events), *extra)
    assert result.exit_code == 0, result.stderr
    return dict(json.loads(result.stdout))


@pytest.mark.parametrize("pack", sorted(p.name for p in PACKS.iterdir()))
def test_every_example_pack_validates(pack: str) -> None:
    """Each shipped example pack is valid and summarised on one line."""
    result = invoke("validate", str(PACKS / pack / "pack.yaml"))

    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("valid: ")
    assert len(result.stdout.strip().splitlines()) == 1


def test_coding_pack_scores_capture_listing_and_code_execution() -> None:
    """The coding pack reads captures, a listing and a code_execution record (2/3 passed)."""
    card = score("fizzbuzz-coding", "events.json")

    details = {d["key"]: d for d in card["validator_details"]}
    assert {k: d["verdict"] for k, d in details.items()} == {
        "solution_exists": "pass", "defines_function": "pass", "layout": "pass", "tests": "pass"}
    assert details["tests"]["normalized_score"] == pytest.approx(2 / 3)
    assert card["dimensions"]["reliability"]["score"] == 0.0  # one failed tool call
    assert card["dimensions"]["speed"]["score"] == pytest.approx(0.75)
    assert card["overall_score"] == pytest.approx(0.7 * 2 / 3 + 0.1 + 0.075)
    assert (card["score"], card["result"], card["passed"]) == (642, "draw", False)
    assert card["overall_reason"] == ("weighted: overall score 0.6417 below scorecard "
                                      "pass_threshold 0.7000")
    assert card["validity"] == "valid"


def test_json_pack_needs_a_case_when_it_has_several() -> None:
    """A multi-case pack is scored per case: without --case the CLI refuses, naming cases."""
    result = invoke("score", "--spec", str(PACKS / "invoice-json" / "pack.yaml"),
                    "--events", str(PACKS / "invoice-json" / "events.acme.json"))

    assert result.exit_code == 2
    assert "default/acme, default/globex" in result.stderr


def test_json_pack_scores_the_chosen_case() -> None:
    """JSON output is checked against the chosen case's expectations; tokens are normalized."""
    card = score("invoice-json", "events.acme.json", "--case", "acme")

    assert card["dimensions"]["correctness"]["score"] == 1.0
    assert card["dimensions"]["token_efficiency"]["score"] == pytest.approx(1 - 500 / 3500)
    assert (card["score"], card["result"]) == (986, "win")


def test_json_pack_fails_the_other_case() -> None:
    """The same output scored against another case fails that case's expectations."""
    card = score("invoice-json", "events.acme.json", "--case", "globex")

    verdicts = {d["key"]: d["verdict"] for d in card["validator_details"]}
    assert verdicts == {"shape": "pass", "total": "fail", "vendor": "fail"}
    assert card["score"] == round(1000 * (0.9 / 3 + 0.1 * (1 - 500 / 3500)))


@pytest.mark.parametrize(("events", "expected"), [
    ("events.pass.json", (1000, "win", True, "")),
    ("events.rude.json", (0, "loss", False, 'gated dimension "courtesy" below pass_threshold')),
])
def test_hybrid_pack_gate_zeroes_the_score(events: str, expected: tuple[Any, ...]) -> None:
    """Under hybrid, a failed gate zeroes the overall score and the result is a loss."""
    card = score("support-reply-hybrid", events)

    assert (card["score"], card["result"], card["passed"]) == expected[:3]
    assert expected[3] in card["overall_reason"]
    assert bool(card["overall_reason"]) is not card["passed"]  # AgentClash: a pass has no reason


def test_validate_reports_every_problem_with_field_and_line(tmp_path: Path) -> None:
    """An invalid spec exits 2 with one ``file: field message`` line per problem on stderr."""
    spec = tmp_path / "bad.yaml"
    spec.write_text("name: ''\nversion_number: 0\njudge_mode: deterministic\nvalidators: []\n"
                    "scorecard:\n  dimensions: [correctness]\n")
    result = invoke("validate", str(spec))

    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.splitlines() == [
        f"{spec}: evaluation_spec.name is required (line 1)",
        f"{spec}: evaluation_spec.version_number must be greater than 0 (line 2)",
        f"{spec}: evaluation_spec.validators must contain at least one validator (line 4)",
    ]


def test_score_accepts_jsonl_and_stored_results(tmp_path: Path) -> None:
    """Events may come as JSON lines or inside a stored result object's ``events``."""
    events = json.loads((PACKS / "support-reply-hybrid" / "events.pass.json").read_text())
    jsonl = tmp_path / "events.jsonl"
    jsonl.write_text("\n".join(json.dumps(e) for e in events) + "\n")
    stored = tmp_path / "result.json"
    stored.write_text(json.dumps({"run_id": "r1", "events": events}))
    pack = str(PACKS / "support-reply-hybrid" / "pack.yaml")

    cards = [invoke("score", "--spec", pack, "--events", str(p)) for p in (jsonl, stored)]

    assert [json.loads(c.stdout)["score"] for c in cards] == [1000, 1000]


SPEC = {"name": "t", "version_number": 1, "judge_mode": "deterministic",
        "validators": [{"key": "a", "type": "exact_match", "target": "final_output",
                        "expected_from": "literal:x"}],
        "scorecard": {"dimensions": ["correctness"]}}
DONE = {"type": "system.run.completed", "occurred_at": "2026-01-01T00:00:00Z",
        "payload": {"final_output": "x"}}


@pytest.mark.parametrize(("spec", "events", "cases", "stderr"), [
    pytest.param(json.dumps(SPEC).replace('"correctness"]',
                                          '{"key": "c", "source": "validators", '
                                          '"weight": Infinity}]'),
                 json.dumps([DONE]), None,
                 ["{spec.json}: invalid JSON: invalid character 'I' looking for beginning of "
                  "value (line 1)"], id="spec-infinity"),
    pytest.param(json.dumps(SPEC), json.dumps([DONE]).replace('"x"}', '"x", "latency_ms": NaN}'),
                 None, ["events: invalid JSON at line 1: invalid character 'N' looking for "
                        "beginning of value"], id="events-nan"),
    pytest.param(json.dumps(SPEC), json.dumps(DONE) + "\n" + '{"type": Infinity}\n', None,
                 ["events: invalid JSON lines at line 2: invalid character 'I' looking for "
                  "beginning of value"], id="jsonl-infinity"),
    pytest.param(json.dumps(SPEC), json.dumps([DONE, {"type": 5, "payload": []}]), None,
                 ["events[1].type Input should be a valid string",
                  "events[1].payload Input should be a valid dictionary"], id="events-fields"),
    pytest.param(json.dumps(SPEC), json.dumps([DONE]), json.dumps([{"case_key": 5}]),
                 ["cases[0].case_key Input should be a valid string"], id="cases-fields"),
])
def test_score_turns_bad_input_into_field_errors(tmp_path: Path, spec: str, events: str,
                                                 cases: str | None, stderr: list[str]) -> None:
    """Non-finite numbers and undecodable events or cases exit 2 naming the field, no trace."""
    paths = {}
    for name, text in (("spec.json", spec), ("events.json", events), ("cases.json", cases)):
        if text is not None:
            paths[name] = tmp_path / name
            paths[name].write_text(text)
    extra = ["--cases", str(paths["cases.json"])] if cases is not None else []
    result = invoke("score", "--spec", str(paths["spec.json"]), "--events",
                    str(paths["events.json"]), *extra)

    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr.splitlines() == [line.replace("{spec.json}", str(paths["spec.json"]))
                                          for line in stderr]


def test_summary_format_is_one_line() -> None:
    """``--format summary`` prints the score, result and reason on one line."""
    result = invoke("score", "--spec", str(PACKS / "support-reply-hybrid" / "pack.yaml"),
                    "--events", str(PACKS / "support-reply-hybrid" / "events.rude.json"),
                    "--format", "summary")

    assert result.exit_code == 0
    assert result.stdout.split()[:3] == ["0/1000", "loss", "failed"]


def test_console_script_is_installed() -> None:
    """The ``evalfleet`` console script runs the same CLI as a separate process."""
    exe = shutil.which("evalfleet") or str(Path(__file__).parents[3] / ".venv/bin/evalfleet")
    done = subprocess.run([exe, "validate", str(PACKS / "fizzbuzz-coding" / "pack.yaml")],
                          capture_output=True, text=True, check=False)

    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("valid: fizzbuzz-coding v1")


def test_spec_schema_validates_an_example_spec() -> None:
    """``evalfleet schema spec`` is a JSON Schema that accepts a real spec and rejects typos."""
    import jsonschema
    import yaml

    result = invoke("schema", "spec")
    schema = json.loads(result.stdout)
    pack = yaml.safe_load((PACKS / "fizzbuzz-coding" / "pack.yaml").read_text())
    spec = pack["version"]["evaluation_spec"]

    jsonschema.validate(spec, schema)
    jsonschema.validate({**spec, "scorecard": {"dimensions": ["correctness"]}}, schema)
    with pytest.raises(jsonschema.ValidationError, match="wieght"):
        jsonschema.validate({**spec, "wieght": 1}, schema)


TWO_SETS = """\
pack: {slug: p, name: P, family: f}
version:
  number: 1
  evaluation_spec:
    name: s
    version_number: 1
    judge_mode: deterministic
    validators:
      - {key: v, type: exact_match, target: final_output, expected_from: case.expectations.a}
    scorecard: {dimensions: [correctness]}
input_sets:
  - key: real
    cases: [{challenge_key: c, case_key: shared, expectations: [{key: a, value: real}]}]
  - key: eval
    cases:
      - {challenge_key: c, case_key: shared, expectations: [{key: a, value: eval}]}
      - {challenge_key: c, case_key: merge-bug-eval, expectations: [{key: a, value: eval}]}
"""


def _two_sets(tmp_path: Path) -> tuple[str, str]:
    pack = tmp_path / "pack.yaml"
    pack.write_text(TWO_SETS)
    events = tmp_path / "events.json"
    events.write_text(json.dumps([{"type": "system.run.completed",
                                   "occurred_at": "2026-01-01T00:00:00Z",
                                   "payload": {"final_output": "eval"}}]))
    return str(pack), str(events)


def test_validate_counts_the_cases_of_every_input_set(tmp_path: Path) -> None:
    """``validate`` counts all three cases of both sets."""
    pack, _ = _two_sets(tmp_path)
    result = invoke("validate", pack)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip().endswith("3 cases in 2 input sets")


@pytest.mark.parametrize("case", ["eval/shared", "merge-bug-eval"])
def test_score_reaches_a_case_of_the_second_input_set(tmp_path: Path, case: str) -> None:
    """``--case`` takes ``<input_set>/<case_key>`` or a bare key only one set uses."""
    pack, events = _two_sets(tmp_path)
    result = invoke("score", "--spec", pack, "--events", events, "--case", case)
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["passed"] is True


def test_score_refuses_an_ambiguous_bare_case_key(tmp_path: Path) -> None:
    """A bare key two sets use is refused (exit 2), naming both sets."""
    pack, events = _two_sets(tmp_path)
    result = invoke("score", "--spec", pack, "--events", events, "--case", "shared")
    assert result.exit_code == 2
    assert 'input sets "eval" and "real" both have it' in result.stderr


def test_a_pack_file_is_sent_as_agentclash_reads_it(tmp_path: Path) -> None:
    """``evalfleet run/submit`` send the pack as yaml.v3 decodes it, not as YAML 1.1 would."""
    from evalfleet.workers.fleet_cli import pack_mapping

    pack = tmp_path / "pack.yaml"
    pack.write_text(
        "pack: {slug: p, name: P, family: f}\nversion:\n  number: 1\n  evaluation_spec:\n"
        "    name: s\n    version_number: 1\n    judge_mode: deterministic\n"
        "    validators:\n      - {key: v, type: exact_match, target: final_output,"
        " expected_from: 'case.expectations.answer'}\n"
        "    scorecard: {dimensions: [correctness]}\n"
        "challenges: [{key: c1, title: C, category: x, difficulty: easy}]\n"
        "input_sets:\n  - key: s\n    name: S\n    cases:\n"
        "      - {challenge_key: c1, case_key: k, payload: {on: 2026-01-01, n: 1e3},"
        " expectations: [{key: answer, value: no}]}\n")

    mapping = pack_mapping(pack)

    [case] = mapping["input_sets"][0]["cases"]
    assert case["expectations"][0]["value"] == "no"
    assert case["payload"] == {"on": "2026-01-01T00:00:00Z", "n": 1000}
