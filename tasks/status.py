"""A run's status record as a platform reads it (``evalfleet schema status``).

The record is the hash ``evalfleet:status:<run_id>`` (:mod:`tasks.lifecycle` writes it):

=============  ==========================================================================
``status``     ``queued``, ``running``, or how it ended: ``scored``, ``rejected``,
               ``internal_error``, ``infra_error``, ``cancelled``, ``expired``
``<s>_at``     when it became ``<s>`` (Unix seconds, Redis's clock), for each status it had
``worker``     the worker running it (from ``running`` on), ``attempt`` that delivery
``match``      the request's match, ``expires_at`` its deadline (Unix seconds)
=============  ==========================================================================

It lives as long as the run's result. A run sent by a client older than the record (or
straight to Celery) has none until a worker starts it.
"""

from __future__ import annotations

from typing import Any, Literal, get_args

from pydantic import BaseModel, Field

from .messages import Outcome

Status = Literal["queued", "running", "scored", "rejected", "infra_error", "internal_error",
                 "cancelled", "expired"]
#: Every status, in the order a run can reach them.
STATUSES: tuple[str, ...] = get_args(Status)
#: The statuses a run ends in (its result is published).
FINAL: frozenset[str] = frozenset(get_args(Outcome))


class RunStatus(BaseModel):
    """Where a run stands, with the time of every transition."""

    run_id: str
    status: Status
    at: dict[str, float] = Field(default_factory=dict)
    """Status → when the run reached it (Unix seconds)."""
    worker: str | None = None
    attempt: int | None = None
    match: str | None = None
    expires_at: float | None = None

    @property
    def final(self) -> bool:
        """Whether the run has ended (its result is published)."""
        return self.status in FINAL

    @classmethod
    def from_record(cls, run_id: str, record: dict[Any, Any]) -> RunStatus | None:
        """The status of ``run_id`` from its hash (as ``HGETALL`` returns it); ``None``
        when it has none."""
        fields = {_text(k): _text(v) for k, v in record.items()}
        if "status" not in fields:
            return None
        at = {key.removesuffix("_at"): float(value) for key, value in fields.items()
              if key.endswith("_at") and key != "expires_at"}
        return cls(run_id=run_id, status=fields["status"], at=at, worker=fields.get("worker"),
                   attempt=fields.get("attempt"), match=fields.get("match"),
                   expires_at=fields.get("expires_at"))


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
