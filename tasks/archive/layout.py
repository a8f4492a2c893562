"""Where a run lives in the archive: keys a person can browse and a program can find from
the run id alone (a wire contract, like the Redis keys).

Under the archive's prefix::

    runs/<run_id>.json.gz                 the run: its result and status (:mod:`.record`)
    by-day/<YYYY-MM-DD>/<run_id>          an empty marker: the day it ended (UTC)
    by-match/<match>/<run_id>             an empty marker: the run's match
    tenants/<tenant>/…                    a tenant's runs, in the same layout

A program finds a run by its id alone (``runs/``); a person, or ``evalfleet runs --match``,
lists a day or a match by the store's own prefix listing of the markers. There is no index
object: writers never race on one, and every key is written with the same bytes however
many times a run is archived (idempotent).
"""

from __future__ import annotations

from datetime import UTC, datetime
from urllib.parse import quote, unquote

RUNS = "runs/"
BY_DAY = "by-day/"
BY_MATCH = "by-match/"
SUFFIX = ".json.gz"
TENANTS = "tenants/"


def name(text: str) -> str:
    """``text`` (a run id, a match) as one key component: percent-encoded past the
    characters run ids allow, never ``.`` or ``..`` (a path on a file store); an empty
    one (a rejected request without an id) is ``%00``."""
    quoted = quote(text, safe="._:@-")
    return quoted.replace(".", "%2E") if quoted in {".", ".."} else quoted or "%00"


def tenant_prefix(tenant: str) -> str:
    """The prefix of a tenant's runs (a tenant's name is a key component as it is)."""
    return f"{TENANTS}{tenant}/"


def run_key(run_id: str) -> str:
    """The key of a run's archived object."""
    return f"{RUNS}{name(run_id)}{SUFFIX}"


def day_prefix(day: str) -> str:
    """The prefix of a day's markers (``day``: ``YYYY-MM-DD``)."""
    return f"{BY_DAY}{day}/"


def match_prefix(match: str) -> str:
    """The prefix of a match's markers."""
    return f"{BY_MATCH}{name(match)}/"


def day_of(moment: float) -> str:
    """The UTC day (``YYYY-MM-DD``) of a Unix time."""
    return datetime.fromtimestamp(moment, UTC).strftime("%Y-%m-%d")


def markers(run_id: str, day: str, match: str | None) -> list[str]:
    """The browsing markers of a run: its day's and, when it has one, its match's."""
    keys = [day_prefix(day) + name(run_id)]
    if match:
        keys.append(match_prefix(match) + name(run_id))
    return keys


def run_id_of(marker: str) -> str:
    """The run id a marker key names (its last component)."""
    return unquote(marker.rsplit("/", 1)[-1])
