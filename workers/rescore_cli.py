"""``evalfleet rescore``: score stored results again with today's semantics, list changes.

    evalfleet rescore RESULTS.json|.jsonl ... --pack PACK.yaml
    evalfleet rescore --stream [--packs-dir DIR] [--format json] [--write CHANGED.jsonl]
    evalfleet rescore --archived-match MATCH | --archived-day YYYY-MM-DD [--archive-url URL]

Each stored RunResult's events are scored again (no sandbox, no model call) against the
pack given with ``--pack``, or the registered pack its provenance names (``--packs-dir``,
default ``EVALFLEET_PACKS_DIR``). Every verdict, score, result and reason that moves is
printed; ``--write`` keeps the re-scored results that changed, with today's provenance,
ready to republish. The stream is read with ``XRANGE``: nothing is consumed or acked; a
result it names that Redis has forgotten is read from the archive (``--archive-url``,
default the settings'). ``--archived-match`` and ``--archived-day`` read a match's or a
day's runs from the archive alone (a leaderboard recomputed months later).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NoReturn

import click
from pydantic import ValidationError

from evalfleet.scoring import Pack
from evalfleet.scoring.compat import UnmarshalError, unmarshal
from evalfleet.tasks.archive import Archive
from evalfleet.tasks.evaluation.packs import registered_pack
from evalfleet.tasks.evaluation.rescoring import Rescored, rescore, stream_results, summary
from evalfleet.tasks.messages import RunResult

from .archive_url import archive_url_option
from .redis_url import redis_url_option
from .refusal import load
from .settings import Settings

EXIT_INVALID = 2
FILE = click.Path(exists=True, dir_okay=False, path_type=Path)


@click.command("rescore")
@click.argument("files", nargs=-1, type=FILE)
@click.option("--stream", is_flag=True, help="Read the fleet's results stream (read-only).")
@click.option("--pack", "pack_path", type=FILE, help="The pack to score every result with.")
@click.option("--packs-dir", type=click.Path(file_okay=False, path_type=Path),
              help="Registered packs, found by each result's provenance.pack_ref "
                   "(default: EVALFLEET_PACKS_DIR).")
@click.option("--format", "output", type=click.Choice(["summary", "json"]), default="summary",
              show_default=True, help="One readable block per run, or one JSON line per run.")
@click.option("--write", "write_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the re-scored results that changed here (JSON lines).")
@click.option("--archived-match", help="Read this match's runs from the archive.")
@click.option("--archived-day", metavar="YYYY-MM-DD",
              help="Read the runs archived for this day (UTC) from the archive.")
@redis_url_option(said="With --stream: the fleet's Redis (default: the settings').")
@archive_url_option()
def rescore_command(files: tuple[Path, ...], stream: bool, pack_path: Path | None,
                    packs_dir: Path | None, output: str, write_path: Path | None,
                    archived_match: str | None, archived_day: str | None,
                    redis_url: str, archive_url: str | None) -> None:
    """Re-score stored results with today's semantics; report what changes."""
    sources = [bool(files), stream, archived_match is not None, archived_day is not None]
    if sum(sources) != 1:
        _fail(["give result files, --stream, --archived-match or --archived-day (one)"])
    settings = Settings()
    fixed = _pack(pack_path) if pack_path else None
    packs = _Packs(fixed, packs_dir or settings.packs_dir)
    archive = Archive.at(archive_url) if archive_url else None
    if (archived_match or archived_day) and archive is None:
        _fail(["--archived-match and --archived-day need an archive (--archive-url)"])
    outcomes = []
    for stored in _sources(files, stream, redis_url, archive, archived_match, archived_day):
        outcome = rescore(stored, packs.of(stored))
        outcomes.append(outcome)
        click.echo(_json_line(outcome) if output == "json" else _block(outcome))
    counts = summary(outcomes)
    click.echo(", ".join(f"{n} {status}" for status, n in counts.items()), err=True)
    if write_path is not None:
        changed = [o.result.to_json() for o in outcomes if o.status == "changed" and o.result]
        write_path.write_text("".join(line + "\n" for line in changed), encoding="utf-8")


class _Packs:
    """The pack each result is scored with: the fixed one, or its registered one."""

    def __init__(self, fixed: Pack | None, packs_dir: Path | None) -> None:
        self.fixed, self.packs_dir = fixed, packs_dir
        self.loaded: dict[str, Pack | None] = {}

    def of(self, stored: RunResult) -> Pack | None:
        if self.fixed is not None:
            return self.fixed
        name = stored.provenance.pack_ref if stored.provenance else None
        if not name:
            return None
        if name not in self.loaded:
            path = registered_pack(name, self.packs_dir)
            self.loaded[name] = _pack(path) if path else None
        return self.loaded[name]


def _pack(path: Path) -> Pack:
    return load(path)


def _files(paths: tuple[Path, ...]) -> Iterator[RunResult]:
    for path in paths:
        for index, document in enumerate(_documents(path)):
            try:
                yield RunResult.model_validate(document)
            except ValidationError as err:
                first = err.errors()[0]
                where = ".".join(str(p) for p in first["loc"])
                _fail([f"{path}: result {index}: {where} {first['msg']}"])


def _documents(path: Path) -> list[Any]:
    """A file's results: one JSON object, a JSON array of them, or JSON lines."""
    text = path.read_text(encoding="utf-8")
    try:
        data = unmarshal(text, float64=False)
    except UnmarshalError as whole:
        lines = [line for line in text.splitlines() if line.strip()]
        try:
            return [unmarshal(line, float64=False) for line in lines]
        except UnmarshalError:
            _fail([f"{path}: not JSON, a JSON array or JSON lines: {whole}"])
    return data if isinstance(data, list) else [data]


def _sources(files: tuple[Path, ...], stream: bool, redis_url: str, archive: Archive | None,
             match: str | None, day: str | None) -> Iterator[RunResult]:
    """The results the options name."""
    if stream:
        return _stream(redis_url, archive)
    if archive is not None and (match or day):
        run_ids = archive.match_runs(match) if match else list(archive.day_runs(str(day)))
        return (found for r in run_ids if (found := archive.result(r)) is not None)
    return _files(files)


def _stream(redis_url: str, archive: Archive | None) -> Iterator[RunResult]:
    from evalfleet.tasks.redis_connection import connect

    client = connect(redis_url)
    try:
        yield from stream_results(client, forgotten=archive.result if archive else None)
    finally:
        client.close()


def _block(outcome: Rescored) -> str:
    head = f"{outcome.run_id}: {outcome.status}" + (f": {outcome.reason}" if outcome.reason
                                                    else "")
    lines = [head, *(f"  note: {note}" for note in outcome.notes)]
    lines += [f"  {c.kind:<7} {c.field}: {_show(c.before)} -> {_show(c.after)}"
              for c in outcome.changes]
    return "\n".join(lines)


def _show(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _json_line(outcome: Rescored) -> str:
    return json.dumps({
        "run_id": outcome.run_id, "status": outcome.status, "reason": outcome.reason,
        "notes": outcome.notes,
        "changes": [{"field": c.field, "kind": c.kind, "before": c.before, "after": c.after}
                    for c in outcome.changes]}, ensure_ascii=False)


def _fail(lines: list[str]) -> NoReturn:
    for line in lines:
        click.echo(line, err=True)
    sys.exit(EXIT_INVALID)
