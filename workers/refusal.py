"""How the command line refuses bad input: each problem on its own line, then exit 2.

Shared by the commands that load a pack (:mod:`workers.cli`, :mod:`workers.check_cli`,
:mod:`workers.fleet_cli`); :mod:`workers.faults` says what a :class:`PackRefused` is.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import NoReturn

import click

from evalfleet.scoring import FieldError, Pack, SpecError, load_pack

#: The exit code of a command whose input is invalid.
EXIT_INVALID = 2


class PackRefused(ValueError):
    """The pack (or spec) at ``path`` is invalid: ``errors`` are its loader's findings."""

    def __init__(self, path: Path, errors: list[FieldError]) -> None:
        self.path, self.errors = path, errors
        super().__init__(f"{path}: " + "; ".join(str(e) for e in errors))


def fail(lines: list[str]) -> NoReturn:
    """Print ``lines`` on stderr and exit with :data:`EXIT_INVALID`."""
    for line in lines:
        click.echo(line, err=True)
    sys.exit(EXIT_INVALID)


def load(path: str | Path) -> Pack:
    """The pack or spec at ``path``.

    Raises:
        PackRefused: it cannot be read or is invalid.
    """
    try:
        return load_pack(Path(path))
    except SpecError as err:
        raise PackRefused(Path(path), err.errors) from None
