"""How the command line refuses bad input: each problem on its own line, then exit 2.

Shared by the commands that load a pack (:mod:`workers.cli`, :mod:`workers.check_cli`).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import NoReturn

import click

from evalfleet.scoring import Pack, SpecError, load_pack

#: The exit code of a command whose input is invalid.
EXIT_INVALID = 2


def fail(lines: list[str]) -> NoReturn:
    """Print ``lines`` on stderr and exit with :data:`EXIT_INVALID`."""
    for line in lines:
        click.echo(line, err=True)
    sys.exit(EXIT_INVALID)


def load(path: str) -> Pack:
    """The pack or spec at ``path``, or its problems printed and exit 2."""
    try:
        return load_pack(Path(path))
    except SpecError as err:
        fail([str(e) for e in err.errors])
