"""Cancelling runs, for the client and the intake stream alike.

A cancelled run's one result is published by the cancel (:meth:`tasks.lifecycle.Lifecycle.
cancel`): ``outcome: cancelled``, no scorecard, never the candidate's loss or the fleet's
failure. A queued run then never starts (its worker finds the result and drops it); a
running one's worker ends its sandbox (:mod:`tasks.cancelling`); a finished one is left as
it is, and the answer says so.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..lifecycle import Cancelled, Lifecycle, Publication
from ..messages import RunResult
from ..redis_keys import FLEET, Keyspace

#: The reason of every cancelled result.
CANCELLED_REASON = "cancelled by the platform before it was published"

Seal = Callable[[RunResult], str]
"""A result as published: a :class:`tasks.signatures.Signer`'s ``seal`` (the fleet's
forwarder, a client given a key), or :func:`unsigned`."""


def unsigned(result: RunResult) -> str:
    """A result's JSON with no signature: a client that holds no key publishes so."""
    return result.to_json()


def cancel(lifecycle: Lifecycle, run_id: str, seal: Seal = unsigned) -> Cancelled:
    """Cancel one run (see the module)."""
    match = lifecycle.redis.hget(lifecycle.keys.status(run_id), "match")
    return lifecycle.cancel(*cancelled(run_id, match, seal))


def cancelled(run_id: str, match: Any, seal: Seal = unsigned) -> tuple[Publication, str]:
    """The publication and the body of ``run_id``'s cancelled result (``match``: the
    record's, as ``HGET`` returns it)."""
    found = _text(match)
    result = RunResult(run_id=run_id, outcome="cancelled", reason=CANCELLED_REASON,
                       match=found or None)
    return Publication(run_id, "cancelled", match=found), seal(result)


def cancel_match(lifecycle: Lifecycle, match: str, seal: Seal = unsigned) -> list[Cancelled]:
    """Cancel every run of ``match`` that has not ended."""
    return [cancel(lifecycle, run_id, seal)
            for run_id in match_runs(lifecycle.redis, match, lifecycle.keys)]


def match_runs(redis: Any, match: str, keys: Keyspace = FLEET) -> list[str]:
    """The run ids of ``match`` (in the keys of ``keys``), in the order they were first
    seen."""
    return texts(redis.zrange(keys.match(match), 0, -1))


def texts(values: list[Any]) -> list[str]:
    """Replies (bytes or text) as text."""
    return [_text(value) for value in values]


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value.decode() if isinstance(value, bytes) else str(value)
