"""How a client submits: requests are checked, then added to the intake stream in pipelined
round trips, each run's ``queued`` record with it (:func:`tasks.lifecycle.submission`).
The workers' forwarders (:mod:`.intake`) move the entries into the Celery queues.

The parts both clients share (:class:`~.client.EvalfleetClient` and
:class:`~.async_client.AsyncEvalfleetClient`): what to send, and what Redis's replies mean.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import redis

from ..lifecycle import Call, submission
from ..messages import RunRequest
from ..redis_keys import FLEET, Keyspace

#: How a submission's error starts when the fleet refused it on purpose (the archive's
#: backlog would outgrow Redis's memory: :data:`~tasks.redis_keys.ARCHIVE_REFUSAL_KEY`).
REFUSED = "EVALFLEET_REFUSED"
#: Runs sent per pipelined round trip by ``submit_batch``.
SUBMIT_CHUNK = 500


class SubmitError(RuntimeError):
    """Redis did not take a submission (full, unreachable, or the fleet refused new runs
    while its archive catches up): the runs named in
    ``not_enqueued`` were not queued and must be submitted again; those in ``enqueued`` (of
    the same batch) were."""

    def __init__(self, enqueued: list[str], not_enqueued: list[str], cause: BaseException,
                 uncertain: list[str] | None = None):
        self.enqueued, self.not_enqueued = enqueued, not_enqueued
        self.uncertain = uncertain or []
        """Those of ``not_enqueued`` that were in a round trip whose replies never came (the
        connection failed): some may be queued; submitting them again is harmless, the
        fleet publishes one result per run id."""
        text = f"{cause} {cause.__cause__ or ''}"
        full = "maxmemory" in text or isinstance(cause, redis.OutOfMemoryError) \
            or isinstance(cause.__cause__, redis.OutOfMemoryError)
        why = ("Redis is full (maxmemory, noeviction): free memory or raise maxmemory"
               if full else "Redis could not be reached")
        if isinstance(cause, redis.exceptions.NoPermissionError):
            why = ("Redis refused this client's user (NOPERM): a tenant's user submits to "
                   "its own intake only (docs/tenants.md)")
        if REFUSED in text:
            why = "the fleet refuses new runs: " + text.split(REFUSED, 1)[1].strip()
        super().__init__(
            f"{why}; not enqueued: {', '.join(not_enqueued)} (submit them again)"
            + (f"; of those perhaps enqueued: {', '.join(self.uncertain)}" if uncertain else "")
            + (f"; enqueued before the failure: {', '.join(enqueued)}" if enqueued else "")
            + f" [{type(cause).__name__}: {cause}]")


def checked(requests: Iterable[RunRequest | dict[str, Any]]) -> list[RunRequest]:
    """Every request validated (before anything is sent).

    Raises:
        pydantic.ValidationError: a request is not a valid RunRequest.
    """
    return [r if isinstance(r, RunRequest) else RunRequest.model_validate(r) for r in requests]


def chunks(requests: list[RunRequest], size: int) -> Iterator[list[RunRequest]]:
    """``requests`` in round trips of ``size``."""
    for start in range(0, len(requests), size):
        yield requests[start:start + size]


def calls(part: list[RunRequest], ttl_s: int, keys: Keyspace = FLEET) -> list[Call]:
    """One intake entry (with its ``queued`` record) per request, in the keys of
    ``keys``."""
    return [submission(r.model_dump_json(exclude_none=True), r.run_id, r.match,
                       None if r.expires_at is None else r.expires_at.timestamp(), ttl_s,
                       r.callback_url, keys) for r in part]


def settle(sent: list[str], part: list[RunRequest], replies: list[Any],
           requests: list[RunRequest]) -> list[str]:
    """``sent`` and the runs of ``part`` Redis took.

    Raises:
        SubmitError: Redis refused some of ``part`` (full): those, and every run of
            ``requests`` after ``part``, were not enqueued.
    """
    refused = [(r.run_id, reply) for r, reply in zip(part, replies, strict=True)
               if isinstance(reply, Exception)]
    taken = [*sent, *(r.run_id for r, reply in zip(part, replies, strict=True)
                      if not isinstance(reply, Exception))]
    if refused:
        later = [r.run_id for r in requests[len(sent) + len(part):]]
        raise SubmitError(taken, [run_id for run_id, _ in refused] + later, refused[0][1])
    return taken


def lost(sent: list[str], part: list[RunRequest], requests: list[RunRequest],
         cause: BaseException) -> SubmitError:
    """The error of a round trip whose replies never came: ``part`` is uncertain."""
    return SubmitError(sent, [r.run_id for r in requests[len(sent):]], cause,
                       uncertain=[r.run_id for r in part])
