"""``evalfleet check PACK``: prove a pack through the real sandbox before any agent meets it.

    evalfleet check PACK [--reference PATH] [--case KEY] [--runs K] [--jobs N]
                         [--redis-url URL | --fleet URL] [--timeout S] [--format table|json]

Exit 0 when the pack is sound and no forgery of the battery wins it, 1 when it is unsound
or a forgery wins, 2 when the check cannot start (an invalid pack, no reference
submission).
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import click
from rich.console import Console, Group
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from evalfleet.tasks.checking import (
    LEAK,
    SECTIONS,
    CheckError,
    CheckReport,
    Execute,
    SectionReport,
    check_pack,
    subjects,
)
from evalfleet.tasks.messages import RunRequest, RunResult

from .fleet_cli import PACK, SUBMISSION, local_pipeline, pack_mapping
from .redis_url import redis_url_option
from .refusal import load
from .settings import Settings

EXIT_UNSOUND, EXIT_INVALID = 1, 2
MARKS = {"error": ("✗", "red"), "warning": ("!", "yellow"), "info": ("·", "dim")}


@click.command()
@click.argument("pack", type=PACK)
@click.option("--reference", type=SUBMISSION,
              help="The reference submission (default: the pack's version.sandbox.reference).")
@click.option("--case", "case_key", help="Check only this case (default: every case).")
@click.option("--runs", "-k", type=click.IntRange(1, 1000), default=5, show_default=True,
              help="Runs of the reference submission per case.")
@click.option("--jobs", "-j", type=click.IntRange(1, 64), default=1, show_default=True,
              help="Runs at once, each in a sandbox of its own (without --fleet).")
@redis_url_option("--redis-url", "--fleet", envvar=None,
                  said="Run through the live fleet on this Redis and record the preflight "
                       "there (--fleet is the same; EVALFLEET_REDIS_URL is not read: "
                       "without this option the check runs here).")
@click.option("--timeout", type=float, default=600.0, show_default=True,
              help="With --fleet: seconds to wait for each run's result.")
@click.option("--format", "output", type=click.Choice(["table", "json"]), default="table",
              show_default=True)
@click.option("--section", "only", multiple=True,
              type=click.Choice([s.key for s in SECTIONS]),
              help="Run only this section's trials and verdict (repeat for several; default: "
                   "every section). A partial check records no preflight.")
def check(pack: Path, reference: Path | None, case_key: str | None, runs: int, jobs: int,
          redis_url: str | None, timeout: float, output: str, only: tuple[str, ...]) -> None:
    """Preflight a pack: its reference wins K runs out of K with the same verdicts, an
    empty submission loses, nothing fails for environmental reasons, and no forgery of the
    battery wins."""
    if only and redis_url:
        raise click.UsageError("--section checks part of a pack, and a preflight records the "
                               "whole check: drop --section, or --redis-url/--fleet")
    loaded = load(pack)
    try:
        checked = subjects(loaded, pack_mapping(pack), pack.parent, runs=runs,
                           case_key=case_key, reference=reference)
    except CheckError as error:
        click.echo(f"check: {error}", err=True)
        sys.exit(EXIT_INVALID)
    report = check_pack(checked, _executor(redis_url, timeout, jobs),
                        where=_where(redis_url) if redis_url else "local",
                        sections=[s for s in SECTIONS if not only or s.key in only])
    if redis_url:
        record(redis_url, report)
    if output == "json":
        click.echo(report.model_dump_json(indent=2))
    else:
        Console(highlight=False).print(render(report))
    forged = not report.sections.get("forgeries", True)
    sys.exit(0 if report.passed and not forged else EXIT_UNSOUND)


def _executor(fleet_url: str | None, timeout: float, jobs: int) -> Execute:
    from evalfleet.tasks.checking import one_by_one, through_fleet

    if fleet_url is None:
        return one_by_one(local_pipeline(Settings()), progress, jobs=jobs)
    from evalfleet.tasks.platform import EvalfleetClient

    return through_fleet(EvalfleetClient(fleet_url), timeout, progress)


def record(fleet_url: str, report: CheckReport) -> None:
    """Leave the verdict where the fleet's workers look for it (:mod:`tasks.checking.preflight`)."""
    from evalfleet.tasks.checking.preflight import PreflightRecord, PreflightStore
    from evalfleet.tasks.redis_connection import connect

    client = connect(fleet_url)
    try:
        key = PreflightStore(client).put(PreflightRecord.of(report, datetime.now(UTC)))
    finally:
        client.close()
    verdict = "passed" if report.passed else "failed"
    click.echo(f"check: preflight {verdict}, recorded at {key}", err=True)


def _where(url: str) -> str:
    """A Redis URL without its password."""
    parts = urlsplit(url)
    return f"fleet at {parts.scheme}://{parts.hostname}:{parts.port or 6379}{parts.path}"


def progress(request: RunRequest, result: RunResult) -> None:
    """One line on stderr per run finished."""
    trial = request.metadata.get("evalfleet_check", {})
    card = result.scorecard
    said = (f"{card.score}/1000 {card.result or 'no contest'}" if card is not None
            else f"{result.outcome}: {result.reason}")
    click.echo(f"check {request.case_key or '-'}: {trial.get('trial')} "
               f"{trial.get('run')}: {said}", err=True)


def render(report: CheckReport) -> Group:
    """The report as people read it: a header, each case's sections, the verdict."""
    parts: list[Any] = [_header(report)]
    for case in report.cases:
        parts.append(Text(f"\ncase {case.case_key or '(no cases)'}", style="bold"))
        parts += [_section(section) for section in case.sections]
    parts.append(verdict(report))
    return Group(*parts)


def verdict(report: CheckReport) -> Text:
    """The last line: sound or not, whether a forgery of the battery wins, and whether
    hidden tests reach a result."""
    errors = [f.message for c in report.cases for s in c.sections if s.key == "forgeries"
              for f in s.findings if f.level == "error"]
    leaked = sum(1 for message in errors if message.startswith(LEAK))
    forged = len(errors) - leaked
    if not report.passed:
        return Text(f"\nUNSOUND: {len(report.errors())} problem(s)", style="bold red")
    if errors:
        return Text(f"\nFORGEABLE: sound, but {forged} forgery(ies) win and hidden tests "
                    f"reach {leaked} result(s) (docs/packs.md, \"Packs that cannot be gamed\")",
                    style="bold red")
    return Text("\nSOUND: every section passed, no forgery wins, no hidden test leaks",
                style="bold green")


def _header(report: CheckReport) -> Text:
    version = f" v{report.version_number}" if report.version_number is not None else ""
    ids = ", ".join(short_id(i) for i in report.image_ids) or "-"
    return Text.assemble(
        (f"evalfleet check: {report.pack}{version}", "bold"),
        f"  (sha256:{report.digest[:16]}…), {report.runs} reference run(s) per case\n",
        f"sandbox: {', '.join(report.images) or '-'} ({ids}) on "
        f"{', '.join(report.runtimes) or '-'}; {report.where}")


def short_id(image_id: str) -> str:
    """``sha256:1f7f6b4c1717…`` → ``1f7f6b4c1717``."""
    return image_id.removeprefix("sha256:")[:12]


def _section(section: SectionReport) -> Group:
    mark, style = ("✓", "green") if section.passed else ("✗", "red")
    note = "" if section.core else " (note)"
    body: list[Any] = []
    if section.rows:
        table = Table(*section.columns, box=None, padding=(0, 2), pad_edge=False)
        for row in section.rows:
            table.add_row(*("-" if cell is None else str(cell) for cell in row))
        body.append(table)
    if section.findings:
        findings = Table.grid(padding=(0, 1))
        for finding in section.findings:
            sign, colour = MARKS[finding.level]
            findings.add_row(Text(sign, style=colour), Text(finding.message, style=colour))
        body.append(findings)
    return Group(Text.assemble(f"  {mark} ", (section.title, style), note),
                 Padding(Group(*body), (0, 0, 0, 4), expand=False))
