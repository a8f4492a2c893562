"""``--redis-url``: the fleet's Redis, for every command that talks to it.

The option reads ``EVALFLEET_REDIS_URL`` (named in ``--help``); when neither is given, the
settings' value is used (``/run/secrets/evalfleet_redis_url``, else the default
``redis://127.0.0.1:6379/0``). The URL a command ends up with is kept in ``ctx.meta`` so
that a fault names the address it could not reach (:mod:`workers.faults`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from .faults import REDIS_URL_META
from .settings import Settings

F = TypeVar("F", bound=Callable[..., Any])
ENVVAR = "EVALFLEET_REDIS_URL"


def redis_url_option(*names: str, envvar: str | None = ENVVAR,
                     said: str = "The fleet's Redis (redis://[:PASSWORD@]HOST:PORT/DB; "
                                 "default: the settings', redis://127.0.0.1:6379/0).",
                     ) -> Callable[[F], F]:
    """The ``--redis-url`` option: a command's parameter ``redis_url`` (a URL, always)."""
    return click.option(*(names or ("--redis-url",)), "redis_url", metavar="URL",
                        envvar=envvar, show_envvar=envvar is not None, help=said,
                        callback=_resolved if envvar else _remembered)


def _resolved(ctx: click.Context, param: click.Parameter, value: str | None) -> str:
    return _remembered(ctx, param, value or Settings().redis_url) or ""


def _remembered(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value:
        ctx.meta[REDIS_URL_META] = value
    return value
