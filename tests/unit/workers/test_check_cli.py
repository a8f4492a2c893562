"""``evalfleet check`` without a sandbox: what stops it early, and how a report reads."""

from __future__ import annotations

from pathlib import Path

import yaml
from click.testing import CliRunner
from rich.console import Console
from unit.tasks.checking_support import PACK, card, result, subject

from evalfleet.tasks.checking import check_pack
from evalfleet.tasks.checking.forgeries.battery import battery
from evalfleet.workers.check_cli import render
from evalfleet.workers.cli import main


def write_pack(tmp_path: Path, **sandbox: object) -> Path:
    manifest = {**PACK, "version": {**PACK["version"],
                                    "sandbox": {**PACK["version"]["sandbox"], **sandbox}}}
    path = tmp_path / "pack.yaml"
    path.write_text(yaml.safe_dump(manifest))
    return path


def test_a_pack_without_a_reference_cannot_be_checked(tmp_path: Path) -> None:
    """No reference (and no --reference): exit 2 naming the field, before any sandbox."""
    outcome = CliRunner().invoke(main, ["check", str(write_pack(tmp_path, reference=None))])

    assert outcome.exit_code == 2
    assert outcome.stderr.startswith("check: pack.version.sandbox.reference: the pack names no "
                                     "reference submission")


def test_an_unknown_case_cannot_be_checked(tmp_path: Path) -> None:
    """``--case`` must name a case of the pack."""
    (tmp_path / "ref").mkdir()
    outcome = CliRunner().invoke(main, ["check", str(write_pack(tmp_path)), "--case", "c9"])

    assert outcome.exit_code == 2
    assert 'no case "c9"' in outcome.stderr


def test_an_invalid_pack_is_reported_as_validate_does(tmp_path: Path) -> None:
    """A spec error: one ``field message`` line per problem, exit 2."""
    path = tmp_path / "pack.yaml"
    path.write_text("pack: {slug: x}\nversion: {evaluation_spec: {name: x}}\n")
    outcome = CliRunner().invoke(main, ["check", str(path)])

    assert outcome.exit_code == 2
    assert "version.evaluation_spec" in outcome.stderr


def test_the_table_names_each_case_section_and_problem() -> None:
    """A check whose empty submission wins: its section is marked failed with the reason."""
    report = check_pack([subject(runs=2)], lambda requests: [result(card())] * len(requests),
                        where="local")
    console = Console(width=120, record=True, no_color=True)
    console.print(render(report))
    text = console.export_text()

    assert "case c1" in text
    assert "✓ The reference submission wins every run" in text
    assert "✗ The empty submission loses" in text
    assert "✗ the empty submission does not lose: 1000/1000 win" in text
    assert "✓ Run time spread (note)" in text
    assert "✗ No forgery wins (note)" in text  # every run wins here, forgeries too
    assert text.rstrip().endswith(f"UNSOUND: {1 + len(battery(subject().pack))} problem(s)")


def test_a_partial_check_records_no_preflight() -> None:
    """``--section`` runs part of a check; a preflight records the whole one: refused."""
    pack = Path(__file__).parents[3] / "examples" / "packs" / "fizzbuzz-coding" / "pack.yaml"
    done = CliRunner().invoke(main, ["check", str(pack), "--section", "reference",
                                     "--fleet", "redis://127.0.0.1:1/0"])
    assert done.exit_code == 2
    assert "--section checks part of a pack" in done.output
