"""What a webhook carries: the published result byte for byte, or a summary of it.

The result is sent exactly as it was published (never parsed and written again), so a
signature the fleet put inside it still verifies. A result larger than the operator's
``max_body_bytes`` is sent as a summary instead: its run id, outcome, score, size and
SHA-256, and ``result_url``: a link to the archived object that holds the whole result
(:data:`ResultLink`: the archive's presigned URL; the object is an ``evalfleet.archive/1``
record, gzip'd JSON whose ``result`` is the published text, byte for byte: its SHA-256 is
the summary's ``result_sha256``). A link that cannot be given yet (the archiver has not
written the run) raises :class:`LinkPending`, and the delivery waits for it. With no
archive, or one that gives no links (a local directory), ``result_url`` is ``null`` and
``result_omitted`` says where the result is (its Redis key, for its TTL).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any, Protocol

from ..redis_keys import keyspace


class ResultLink(Protocol):
    """A link to a run's whole result (its id, its body, its tenant) for a summary;
    ``None``: no archive."""

    def __call__(self, run_id: str, body: bytes, tenant: str | None = None) -> str | None:
        ...

#: What ``result_url`` points at (the summary says so).
LINKED_FORMAT = "evalfleet.archive/1"


class LinkPending(Exception):
    """The archive will have the run's object, but not yet: try the delivery later."""


def no_link(run_id: str, body: bytes, tenant: str | None = None) -> str | None:
    """No archive is configured: a summary carries no link."""
    return None


@dataclass(frozen=True)
class Payload:
    """A webhook's body, and which kind it is (``result`` or ``summary``)."""

    body: bytes
    kind: str


def payload(raw: bytes, max_bytes: int, link: ResultLink = no_link,
            tenant: str | None = None) -> Payload:
    """``raw`` (the published result of a run of ``tenant``, None: the fleet's own) when it
    fits in ``max_bytes``, else its summary."""
    if len(raw) <= max_bytes:
        return Payload(raw, "result")
    found = summary(raw, max_bytes, link, tenant)
    return Payload(json.dumps(found, separators=(",", ":")).encode(), "summary")


def summary(raw: bytes, max_bytes: int, link: ResultLink,
            tenant: str | None = None) -> dict[str, Any]:
    """The summary of a result too large to send (see the module).

    Raises:
        LinkPending: its link cannot be given yet (``link`` says so).
    """
    result = json.loads(raw)
    card = result.get("scorecard") or {}
    run_id = str(result.get("run_id", ""))
    url, key = link(run_id, raw, tenant), keyspace(tenant).result(run_id)
    omitted = (f"the result is {len(raw)} bytes, over this fleet's webhook limit of "
               f"{max_bytes}: " + (f"fetch it from result_url (an {LINKED_FORMAT} record: "
                                   "gzip'd JSON, the result text in its `result`)" if url else
                                   f"read it from Redis ({key}) within its TTL"))
    return {"schema_version": 1, "kind": "summary", "run_id": run_id,
            "outcome": result.get("outcome"), "match": result.get("match"),
            "reason": result.get("reason", ""), "score": card.get("score"),
            "result": card.get("result"), "result_bytes": len(raw),
            "result_sha256": hashlib.sha256(raw).hexdigest(), "result_url": url,
            "result_omitted": omitted}
