"""The ``evalfleet`` command line: the process edge for pack authors and operators.

    evalfleet validate PACK_OR_SPEC
    evalfleet score --spec PACK_OR_SPEC --events EVENTS.json|.jsonl
                    [--cases CASES.json] [--case KEY] [--format table|json|summary]
    evalfleet check PACK [--reference PATH] [--runs K] [--jobs N] [--fleet REDIS_URL]  (check_cli)
    evalfleet rescore RESULTS.json|.jsonl ... | --stream  [--pack PACK] [--write FILE]
    evalfleet packs [--redis-url URL]  (packs_cli)

Every command answers an ordinary fault in one line and an exit code (:mod:`workers.faults`).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from evalfleet.scoring import (
    Case,
    CaseError,
    Pack,
    Scorecard,
    SpecError,
    decode_cases,
    evaluate,
    find_case,
    spec_json_schema,
)
from evalfleet.scoring.compat import UnmarshalError, unmarshal
from evalfleet.tasks.messages import RunRequest, RunResult
from evalfleet.tasks.status import RunStatus

from .check_cli import check
from .faults import FaultyGroup, epilog
from .fleet_cli import COMMANDS
from .keys_cli import keys
from .packs_cli import packs
from .refusal import fail, load
from .rescore_cli import rescore_command
from .tenants_cli import tenant
from .verify_cli import verify_command


@click.group(cls=FaultyGroup, epilog=epilog())
@click.version_option(package_name="evalfleet")
def main() -> None:
    """evalfleet: sandboxed evaluation runs, AgentClash scoring, Clawdiators scale.

    Commands that talk to the fleet take --redis-url (default: EVALFLEET_REDIS_URL).
    """


@main.command()
@click.argument("pack_or_spec", type=click.Path(exists=True, dir_okay=False))
def validate(pack_or_spec: str) -> None:
    """Check a pack or spec; print one line per problem (exit 2) or a summary (exit 0),
    with a warning for each way its hidden tests' verdict could be forged."""
    from evalfleet.tasks.checking.forgeries.battery import exposure
    from evalfleet.tasks.evaluation.packs import sandbox_block
    from evalfleet.tasks.messages import Rejection

    pack = load(pack_or_spec)
    try:
        sandbox_block(pack)
    except Rejection as rejection:
        fail([f"{pack_or_spec}: {p.field} {p.message}" for p in rejection.problems])
    for warning in exposure(pack):
        click.echo(f"warning: {warning}", err=True)
    spec = pack.spec
    sets = len({c.input_set for c in pack.cases})
    click.echo(f"valid: {spec.name} v{spec.version_number} ({spec.judge_mode}, "
               f"{spec.scorecard.strategy}): {len(spec.validators)} validators, "
               f"{len(spec.metrics)} metrics, {len(spec.scorecard.dimensions)} dimensions, "
               f"{len(pack.cases)} cases in {sets} input sets")


@main.command()
@click.option("--spec", "spec_path", required=True, type=click.Path(exists=True, dir_okay=False),
              help="The pack or evaluation spec (JSON or YAML).")
@click.option("--events", "events_path", required=True,
              type=click.Path(exists=True, dir_okay=False),
              help="The run's events: a JSON array, a JSON object with 'events', or JSON lines.")
@click.option("--cases", "cases_path", type=click.Path(exists=True, dir_okay=False),
              help="Case objects (JSON); default: the pack's own input set.")
@click.option("--case", "case_key",
              help="The case to score when there are several: KEY or INPUT_SET/KEY.")
@click.option("--format", "output", type=click.Choice(["table", "json", "summary"]),
              help="The report for people, the scorecard JSON, or one summary line "
                   "(default: table on a terminal, else json).")
def score(spec_path: str, events_path: str, cases_path: str | None, case_key: str | None,
          output: str | None) -> None:
    """Score one run's events against a pack or spec; print the scorecard."""
    from .terminal_report import chosen_format

    pack = load(spec_path)
    events = read_events(Path(events_path))
    try:
        cases = _read_cases(Path(cases_path)) if cases_path else pack.cases
        card = evaluate(pack.spec, events, pick_case(cases, case_key))
    except SpecError as err:  # also InputError: events or cases that do not decode
        fail([str(e) for e in err.errors])
    output = chosen_format(output, "json")
    if output == "table":
        _print_report(card, pack, events, Path(events_path))
    else:
        click.echo(card.model_dump_json(by_alias=True, indent=2) if output == "json"
                   else summary_line(card))


def _print_report(card: Scorecard, pack: Pack, events: list[Any], path: Path) -> None:
    """The report for people; a stored result also gives the run's resources."""
    from rich.console import Console

    from .terminal_report import scorecard_report

    stored = _stored_result(path)
    Console(highlight=False).print(scorecard_report(
        card, pack.spec, events, stored.get("resources"), stored.get("timings_ms")))


def _stored_result(path: Path) -> dict[str, Any]:
    """The events file as a stored RunResult (a JSON object), else ``{}``."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError:
        return {}
    return data if isinstance(data, dict) else {}


def summary_line(card: Scorecard) -> str:
    """One human line: score, result, verdict, validity and the overall reason."""
    points = "-" if card.score is None else str(card.score)
    verdict = {True: "passed", False: "failed", None: "no verdict"}[card.passed]
    return (f"{points:>4}/1000 {card.result or 'no contest':<10} {verdict:<10} "
            f"{card.validity:<8} {card.overall_reason}")


SCHEMAS: dict[str, Callable[[], dict[str, Any]]] = {
    "spec": spec_json_schema,
    "scorecard": lambda: Scorecard.model_json_schema(by_alias=True),
    "request": lambda: RunRequest.model_json_schema(),
    "result": lambda: RunResult.model_json_schema(by_alias=True),
    "status": lambda: RunStatus.model_json_schema(),
}


@main.command()
@click.argument("name", type=click.Choice(sorted(SCHEMAS)))
def schema(name: str) -> None:
    """Print the JSON Schema of a document evalfleet reads or writes."""
    click.echo(json.dumps(SCHEMAS[name](), indent=2, sort_keys=True))


def read_events(path: Path) -> list[Any]:
    """Events from a JSON array, an object with ``events`` (a stored RunResult), or JSONL.

    JSON is read as AgentClash's Go decoder reads it: ``NaN``/``Infinity`` are not JSON.
    """
    text = path.read_text(encoding="utf-8")
    try:
        data = unmarshal(text, float64=False)
    except UnmarshalError as err:
        lines = [(n, line) for n, line in enumerate(text.splitlines(), 1) if line.strip()]
        if len(lines) < 2 or not _is_json(lines[0][1]):
            fail([f"events: invalid JSON{_at_line(text, err)}: {err}"])
        return [_json_line(number, line) for number, line in lines]
    if isinstance(data, dict) and isinstance(data.get("events"), list):
        return list(data["events"])
    if isinstance(data, list):
        return data
    fail(["events: must be a JSON array of events, an object with 'events', or JSON lines"])


def _is_json(text: str) -> bool:
    try:
        unmarshal(text, float64=False)
    except UnmarshalError:
        return False
    return True


def _json_line(number: int, line: str) -> Any:
    try:
        return unmarshal(line, float64=False)
    except UnmarshalError as err:
        fail([f"events: invalid JSON lines at line {number}: {err}"])


def _at_line(text: str, err: UnmarshalError) -> str:
    return "" if err.position is None else f" at line {text.count(chr(10), 0, err.position) + 1}"


def _read_cases(path: Path) -> list[Case]:
    text = path.read_text(encoding="utf-8")
    try:
        data = unmarshal(text, float64=False)
    except UnmarshalError as err:
        fail([f"cases: invalid JSON{_at_line(text, err)}: {err}"])
    return decode_cases(data if isinstance(data, list) else [data])


def pick_case(cases: list[Case], case_key: str | None) -> list[Case]:
    """The case(s) to score: the named one, or all of them when at most one exists."""
    if case_key is None:
        if len(cases) > 1:
            keys = ", ".join(c.qualified_key if c.input_set else c.case_key for c in cases)
            fail([f"case: the pack has {len(cases)} cases ({keys}); pass --case KEY"])
        return cases
    try:
        return [find_case(cases, case_key)]
    except CaseError as err:
        fail([f"case: {err}"])


@click.command()
@click.option("--packs", "packs_dir", type=click.Path(file_okay=False, path_type=Path),
              default=Path("examples/packs"), show_default=True)
@click.option("--timeout", type=float, default=300.0, show_default=True,
              help="Seconds to wait for each scorecard.")
def demo(packs_dir: Path, timeout: float) -> None:
    """Run the example packs through a live local fleet and print their scorecards."""
    # A development tool: imported when the command runs, so that the worker process
    # (``evalfleet worker`` starts here too) never loads workers.devtools.
    from .devtools.demo import run_demo

    sys.exit(run_demo(packs_dir, timeout))


for _command in [*COMMANDS, check, demo, keys, packs, rescore_command, tenant,
                 verify_command]:
    main.add_command(_command)
