"""The ``evalfleet`` console script: the worker's command line (:mod:`.cli`), or, where only
the client is installed (``pip install evalfleet``), one line saying what to install."""

from __future__ import annotations

import sys


def main() -> None:
    """Run :func:`.cli.main`; without the worker's dependencies, exit 1 with the fix."""
    try:
        from .cli import main as cli
    except ModuleNotFoundError as err:
        if (err.name or "evalfleet").partition(".")[0] == "evalfleet":
            raise
        sys.exit(f"evalfleet: the command line needs the worker's dependencies ({err.name} "
                 "is missing): pip install 'evalfleet[worker]'")
    cli()
