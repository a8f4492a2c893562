"""``--archive-url``: the fleet's archive, where ``result``, ``status``, ``runs`` and
``rescore`` find runs once Redis has forgotten them (``EVALFLEET_ARCHIVE__URL``; default:
the settings', ``file:///var/lib/evalfleet/archive``; ``none`` looks in Redis only)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from .settings import Settings

F = TypeVar("F", bound=Callable[..., Any])
ENVVAR = "EVALFLEET_ARCHIVE__URL"


def archive_url_option() -> Callable[[F], F]:
    """The ``--archive-url`` option: a command's parameter ``archive_url`` (None: none)."""
    return click.option("--archive-url", "archive_url", metavar="URL", envvar=ENVVAR,
                        show_envvar=True, callback=_resolved,
                        help="The fleet's archive, read once Redis has forgotten a run "
                             "(file:///DIR, s3://BUCKET/PREFIX?endpoint=URL, or none).")


def _resolved(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    url = value or Settings().archive.url
    return None if url.strip().lower() in {"", "none"} else url
