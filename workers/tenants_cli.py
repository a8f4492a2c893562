"""``evalfleet tenant``: the platforms that share the fleet, each with its own Redis user.

    evalfleet tenant add NAME       # prints the user's password once
    evalfleet tenant share NAME --weight 3 --max-in-flight 100 --over-quota refuse
    evalfleet tenant list
    evalfleet tenant show NAME
    evalfleet tenant rotate NAME    # a new password; the old one stops working
    evalfleet tenant remove NAME
    evalfleet tenant apply          # every tenant's user again on every node

The command logs in with the fleet's own credentials (``--redis-url``), which must allow
``ACL SETUSER``. Every Redis node behind the URL (the primary and its replicas; under
Sentinel, those the sentinels know) gets the user, so a failover keeps it
(docs/tenants.md).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import click

from evalfleet.tasks import tenancy
from evalfleet.tasks.tenancy import Tenant

from .redis_url import redis_url_option
from .refusal import EXIT_INVALID


@click.group("tenant")
def tenant() -> None:
    """Tenants: platforms sharing this fleet behind walls of Redis ACLs (docs/tenants.md)."""


def share_options(command: Any) -> Any:
    """The options of a tenant's share of the fleet (:mod:`tasks.admission`)."""
    for option in reversed([
            click.option("--weight", type=float, help="Its share of the workers while "
                         "others wait too (default 1)."),
            click.option("--max-in-flight", type=int, help="At most this many of its runs "
                         "admitted and not yet published (0: no quota)."),
            click.option("--max-per-minute", type=int, help="At most this many of its runs "
                         "admitted per minute (0: no quota)."),
            click.option("--over-quota", type=click.Choice(["wait", "refuse"]),
                         help="A run over a quota waits its turn (default) or is refused.")]):
        command = option(command)
    return command


@tenant.command()
@click.argument("name")
@share_options
@redis_url_option()
def add(name: str, redis_url: str, **share: Any) -> None:
    """Create tenant NAME and its Redis user on every node; print its password (once)."""
    changes = {k: v for k, v in share.items() if v is not None}
    with _fleet(redis_url) as (client, nodes):
        made, password = _checked(lambda: tenancy.add(client, nodes, name, **changes))
    _credentials(made, password, len(nodes))


@tenant.command("share")
@click.argument("name")
@share_options
@redis_url_option()
def share_command(name: str, redis_url: str, **share: Any) -> None:
    """Change tenant NAME's weight or quotas (the admitter applies them within seconds)."""
    changes = {k: v for k, v in share.items() if v is not None}
    if not changes:
        click.echo("nothing to change: give --weight, --max-in-flight, --max-per-minute "
                   "or --over-quota", err=True)
        sys.exit(EXIT_INVALID)
    with _fleet(redis_url, nodes=False) as (client, _):
        changed = _checked(lambda: tenancy.set_share(client, name, **changes))
    click.echo(f"tenant {changed.name}: {_share(changed)}")


@tenant.command("list")
@redis_url_option()
def list_tenants(redis_url: str) -> None:
    """Every tenant: name, Redis user, when it was created."""
    with _fleet(redis_url, nodes=False) as (client, _):
        found = tenancy.all_tenants(client)
    if not found:
        click.echo("no tenants (evalfleet tenant add NAME)", err=True)
    for each in found:
        click.echo(f"{each.name}\t{each.user}\tcreated {_when(each.created_at)}")


@tenant.command()
@click.argument("name")
@redis_url_option()
def show(name: str, redis_url: str) -> None:
    """Tenant NAME: its user, its keys and what its user may run."""
    with _fleet(redis_url, nodes=False) as (client, _):
        found = _checked(lambda: tenancy.find(client, name))
    click.echo(f"tenant:   {found.name}")
    click.echo(f"user:     {found.user}")
    click.echo(f"created:  {_when(found.created_at)}")
    if found.rotated_at:
        click.echo(f"rotated:  {_when(found.rotated_at)}")
    click.echo(f"share:    {_share(found)}")
    click.echo(f"keys:     {found.keys.prefix}*")
    rules = [r for r in tenancy.acl_rules(found) if not r.startswith("#")]
    click.echo(f"rules:    {' '.join(rules)}")


@tenant.command()
@click.argument("name")
@redis_url_option()
def rotate(name: str, redis_url: str) -> None:
    """A new password for tenant NAME on every node (the old one stops working at once;
    its runs in flight go on: the fleet runs them)."""
    with _fleet(redis_url) as (client, nodes):
        made, password = _checked(lambda: tenancy.rotate(client, nodes, name))
    _credentials(made, password, len(nodes))


@tenant.command()
@click.argument("name")
@redis_url_option()
def remove(name: str, redis_url: str) -> None:
    """Delete tenant NAME's user from every node (its keys live out their TTLs)."""
    with _fleet(redis_url) as (client, nodes):
        gone = _checked(lambda: tenancy.remove(client, nodes, name))
    click.echo(f"removed tenant {gone.name} (user {gone.user}) from {len(nodes)} node(s)")


@tenant.command()
@redis_url_option()
def apply(redis_url: str) -> None:
    """Make every tenant's user again on every node (after adding a replica)."""
    with _fleet(redis_url) as (client, nodes):
        count = tenancy.apply_all(client, nodes)
    click.echo(f"{count} tenant(s) on {len(nodes)} node(s)")


@contextmanager
def _fleet(redis_url: str, nodes: bool = True) -> Iterator[tuple[Any, list[Any]]]:
    """The fleet's primary (through the connection factory), and every data node."""
    from evalfleet.tasks.redis_connection import connect, data_nodes

    client = connect(redis_url)
    found = data_nodes(redis_url) if nodes else []
    try:
        yield client, found
    finally:
        for node in [client, *found]:
            node.close()


def _checked(step: Any) -> Any:
    try:
        return step()
    except ValueError as err:  # TenantError, or a share's value
        click.echo(str(err), err=True)
        sys.exit(EXIT_INVALID)


def _credentials(made: Tenant, password: str, nodes: int) -> None:
    click.echo(f"tenant:   {made.name} (on {nodes} node(s))")
    click.echo(f"user:     {made.user}")
    click.echo(f"password: {password}")
    click.echo("           (shown once; the fleet keeps only its hash)")
    click.echo(f"url:      redis://{made.user}:<password>@<host>:<port>/<db>")


def _share(found: Tenant) -> str:
    quotas = [f"{name} {getattr(found, name)}" for name in ("max_in_flight", "max_per_minute")
              if getattr(found, name) is not None]
    return (f"weight {found.weight:g}; " + (", ".join(quotas) or "no quota")
            + (f"; over quota: {found.over_quota}" if quotas else ""))


def _when(moment: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(moment))
