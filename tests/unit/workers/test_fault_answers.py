"""The fault table, the hints and the options of issue 42, without a network."""

from __future__ import annotations

from pathlib import Path

import pytest
import redis
from click.testing import CliRunner

from evalfleet.tasks.checking.submissions import SubmissionError, load_submission
from evalfleet.workers.cli import main
from evalfleet.workers.faults import EXIT_CODES, answer
from evalfleet.workers.hints import spec_hint, submission_hint

REDIS_COMMANDS = ["submit", "result", "status", "cancel", "runs", "watch", "health", "worker",
                  "packs", "rescore"]


@pytest.mark.parametrize("command", REDIS_COMMANDS)
def test_every_command_that_talks_to_redis_names_the_variable_in_its_help(command: str) -> None:
    """``--redis-url`` on each, with ``EVALFLEET_REDIS_URL`` shown."""
    shown = CliRunner().invoke(main, [command, "--help"]).stdout

    assert "--redis-url URL" in shown and "EVALFLEET_REDIS_URL" in shown


def test_check_takes_redis_url_with_fleet_as_its_alias() -> None:
    """``check --fleet`` stays; ``--redis-url`` is the same option."""
    shown = CliRunner().invoke(main, ["check", "--help"]).stdout

    assert "--redis-url, --fleet URL" in shown


def test_the_help_lists_every_exit_code() -> None:
    """``evalfleet --help`` documents the exit codes."""
    shown = CliRunner().invoke(main, ["--help"]).stdout

    assert "Exit codes:" in shown
    assert all(f"  {code:<3} {meaning[:20]}" in shown for code, meaning in EXIT_CODES.items())


@pytest.mark.parametrize(("error", "url", "expected"), [
    (redis.ConnectionError("Error 111 connecting to 10.0.0.9:6380. Connection refused."),
     "redis://:pw@10.0.0.9:6380/2",
     (["Redis at redis://10.0.0.9:6380/2 is unreachable (Connection refused): start it, or "
       "give the fleet's with --redis-url or EVALFLEET_REDIS_URL"], 3)),
    (redis.AuthenticationError("invalid username-password pair"), "redis://:pw@h:1/0",
     (["Redis at redis://h:1/0 refused the password: give redis://:PASSWORD@HOST:PORT/DB "
       "with --redis-url or EVALFLEET_REDIS_URL"], 3)),
    (redis.OutOfMemoryError("OOM command not allowed"), "redis://h:1/0",
     (["Redis at redis://h:1/0 refuses writes (OOM command not allowed): free memory or "
       "raise its maxmemory"], 3)),
    (KeyError("a bug"), "redis://h:1/0", None),
])
def test_answers_name_the_address_without_its_password(
        error: Exception, url: str, expected: tuple[list[str], int] | None) -> None:
    """Redis faults say where and what to do; a password never shows; a bug has no answer."""
    found = answer(error, url)

    assert (None if found is None else (found.lines, found.exit_code)) == expected


@pytest.mark.parametrize(("field", "message", "expected"), [
    ("version.evaluation_spec.scorecard.dimensions[1].weigth", 'unknown field "weigth"',
     'hint: did you mean "weight"?'),
    ("evaluation_spec.validators[0].expectd_from", 'unknown field "expectd_from"',
     'hint: did you mean "expected_from"?'),
    ("version.evaluation_spec.zzz", 'unknown field "zzz"', None),
    ("version.evaluation_spec.name", "is required", None),
    ("pack.whatever", 'unknown field "whatevr"', None),
])
def test_spec_hints_come_from_the_fields_at_that_path(field: str, message: str,
                                                      expected: str | None) -> None:
    """difflib against the spec model's field names where the unknown one sits."""
    assert spec_hint(field, message) == expected


def test_submission_hints_come_from_the_submission_model() -> None:
    """A command's fields, not the submission's, below ``commands[i]``."""
    assert submission_hint("commands[0].timout_ms", 'unknown field "timout_ms"') == \
        'hint: did you mean "timeout_ms"?'


def test_submission_yaml_is_read_with_the_packs_rules(tmp_path: Path) -> None:
    """yaml.v3: ``no`` is text, as in packs (PyYAML made it false)."""
    (tmp_path / "submission.yaml").write_text("commands:\n  - run: no\nfinal_output: off\n")

    submission = load_submission(tmp_path)

    assert (submission.commands[0].run, submission.final_output) == ("no", "off")


def test_a_bad_submission_names_its_file_and_each_field_once(tmp_path: Path) -> None:
    """A value no branch of a union takes is one problem, at the field."""
    document = tmp_path / "run.yaml"
    document.write_text("commands:\n  - run: 5\n    timout_ms: 1\n")

    with pytest.raises(SubmissionError) as refused:
        load_submission(document)

    assert refused.value.path == document
    assert [(p.field, p.message) for p in refused.value.problems] == [
        ("commands[0].run", "Input should be a valid string"),
        ("commands[0].timout_ms", 'unknown field "timout_ms"')]
