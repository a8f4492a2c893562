"""``evalfleet packs``: the packs the fleet's live workers serve (``EVALFLEET_PACKS_DIR``).

    evalfleet packs [--redis-url URL] [--format table|json]

One line per pack version: its name (the ``pack_ref`` requests use), version number,
digest (as ``evalfleet check`` names it) and the workers that serve it; a pack that does
not load says why. Exit 1 when no live worker serves any pack.
"""

from __future__ import annotations

import json
import sys

import click

from .redis_url import redis_url_option
from .served_packs import FleetPack, fleet_packs


@click.command()
@redis_url_option()
@click.option("--format", "output", type=click.Choice(["table", "json"]), default="table",
              show_default=True)
def packs(redis_url: str, output: str) -> None:
    """The packs the fleet serves: name, version, digest and which workers serve each
    (exit 1 when none)."""
    from evalfleet.tasks.redis_connection import connect

    client = connect(redis_url)
    try:
        found = fleet_packs(client)
    finally:
        client.close()
    if output == "json":
        click.echo(json.dumps([{**f.pack._asdict(), "workers": f.workers} for f in found],
                              indent=2))
    elif found:
        click.echo("\n".join(_line(f) for f in found))
    else:
        click.echo("no live worker serves a pack (EVALFLEET_PACKS_DIR: docs/operations.md, "
                   "\"Registering packs\")", err=True)
    sys.exit(0 if found else 1)


def _line(found: FleetPack) -> str:
    pack = found.pack
    version = "-" if pack.version is None else f"v{pack.version}"
    digest = f"sha256:{pack.digest[:16]}" if pack.digest else "invalid"
    where = f"{len(found.workers)} worker(s): {', '.join(found.workers)}"
    problem = f"  ({pack.problem})" if pack.problem else ""
    return f"{pack.name:<24} {version:<5} {digest:<23} {where}{problem}"
