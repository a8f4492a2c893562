"""A run's status record as a platform reads it (``evalfleet schema status``).

The record is the hash ``evalfleet:status:<run_id>`` (:mod:`tasks.lifecycle` writes it):

=============  ==========================================================================
``status``     ``queued``, ``running``, or how it ended: ``scored``, ``rejected``,
               ``internal_error``, ``infra_error``, ``cancelled``, ``expired``
``<s>_at``     when it became ``<s>`` (Unix seconds, Redis's clock), for each status it had
``worker``     the worker running it (from ``running`` on), ``attempt`` that delivery
``match``      the request's match, ``expires_at`` its deadline (Unix seconds)
``callback_``  ``callback_url``: the request's, where its result is POSTed
``webhook``    the delivery of the result to a callback (``pending``, ``delivered``,
               ``failed``), with ``webhook.url``, ``webhook.since`` (when it was
               scheduled), ``webhook.body`` (``result`` or ``summary``),
               ``webhook.reason`` (why it failed) and ``webhook.attempt.<n>``: each
               attempt and its answer, JSON (:mod:`tasks.webhooks.schedule` writes them)
=============  ==========================================================================

It lives as long as the run's result. A run sent by a client older than the record (or
straight to Celery) has none until a worker starts it.
"""

from __future__ import annotations

import json
from typing import Any, Literal, get_args

from pydantic import BaseModel, Field

from .messages import Outcome

Status = Literal["queued", "running", "scored", "rejected", "infra_error", "internal_error",
                 "cancelled", "expired"]
#: Every status, in the order a run can reach them.
STATUSES: tuple[str, ...] = get_args(Status)
#: The statuses a run ends in (its result is published).
FINAL: frozenset[str] = frozenset(get_args(Outcome))


WebhookState = Literal["pending", "delivered", "failed"]
#: The status record's field of the webhook's state; its other fields start with it and
#: a dot (``webhook.url``, ``webhook.attempt.3``).
WEBHOOK_FIELD = "webhook"
ATTEMPT_FIELD = "webhook.attempt."


class WebhookAttempt(BaseModel):
    """One POST of a run's result to its callback, and the answer."""

    n: int
    at: float
    """When it was sent (Unix seconds)."""
    answer: str
    """The HTTP status (``"200"``, ``"500"``, ``"302 not followed"``), or what happened
    instead: ``timeout``, ``connection: …``, ``refused: …`` (the policy: never sent),
    ``sending`` (under way), ``lost: …`` (its sender stopped before an answer: the
    delivery was due again after its lease)."""
    ms: float = 0.0
    """How long it took, in milliseconds."""


class Webhook(BaseModel):
    """The delivery of a run's result to its callback URL."""

    state: WebhookState
    """``pending`` (scheduled, or between retries), ``delivered`` (a 2xx answer) or
    ``failed`` (given up: refused by the policy, or no 2xx answer in the time allowed)."""
    url: str = ""
    since: float | None = None
    """When the delivery was scheduled (Unix seconds, Redis's clock)."""
    body: str = ""
    """``result`` (the published result, byte for byte) or ``summary`` (past the
    operator's ``max_body_bytes``)."""
    reason: str = ""
    """Why it failed."""
    attempts: list[WebhookAttempt] = Field(default_factory=list)

    @classmethod
    def from_fields(cls, fields: dict[str, str]) -> Webhook | None:
        """The delivery the record's fields describe; ``None`` when there is none."""
        if WEBHOOK_FIELD not in fields:
            return None
        attempts = sorted((WebhookAttempt.model_validate_json(value)
                           for key, value in fields.items() if key.startswith(ATTEMPT_FIELD)),
                          key=lambda attempt: attempt.n)
        return cls(state=fields[WEBHOOK_FIELD], url=fields.get("webhook.url", ""),
                   since=fields.get("webhook.since"), body=fields.get("webhook.body", ""),
                   reason=fields.get("webhook.reason", ""), attempts=attempts)


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
    callback_url: str | None = None
    webhook: Webhook | None = None
    """The delivery of its result to a callback, once one is scheduled."""
    held: str | None = None
    """Why a queued run of a tenant is not admitted to the workers now: the quota of its
    tenant it waits on (``max_in_flight`` or ``max_per_minute``: :mod:`tasks.admission`)."""

    @property
    def final(self) -> bool:
        """Whether the run has ended (its result is published)."""
        return self.status in FINAL

    @classmethod
    def from_record(cls, run_id: str, record: dict[Any, Any],
                    held: Any = None) -> RunStatus | None:
        """The status of ``run_id`` from its hash (as ``HGETALL`` returns it); ``None``
        when it has none. ``held``: its tenant's held key (JSON, as ``GET`` returns it),
        which applies while the run waits to be admitted (queued, not sent)."""
        fields = {_text(k): _text(v) for k, v in record.items()}
        if "status" not in fields:
            return None
        at = {key.removesuffix("_at"): float(value) for key, value in fields.items()
              if key.endswith("_at") and key != "expires_at"
              and not key.startswith(WEBHOOK_FIELD)}
        return cls(run_id=run_id, status=fields["status"], at=at, worker=fields.get("worker"),
                   attempt=fields.get("attempt"), match=fields.get("match"),
                   expires_at=fields.get("expires_at"),
                   callback_url=fields.get("callback_url"),
                   webhook=Webhook.from_fields(fields),
                   held=_held(held) if fields["status"] == "queued" and "sent" not in fields
                   else None)


def _held(raw: Any) -> str | None:
    """The quota a held key names (None: no key, or not one of ours)."""
    try:
        return str(json.loads(raw)["quota"]) if raw else None
    except (ValueError, TypeError, KeyError):
        return None


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
