"""Publication: exactly one result per run id, however many times the run executes.

One Lua script does all three steps atomically, so a worker that dies half-way cannot
leave a result key without its stream entry:

1. ``SET evalfleet:result:<run_id> <json> NX EX <ttl>`` — only the first writer wins;
2. ``XADD evalfleet:results MINID ~ <now - ttl> * run_id <id> outcome <outcome>
   score <score> scorecard_result <win|draw|loss>`` — a small entry that names the result;
3. ``PUBLISH evalfleet:results <run_id>``.

A later writer (a redelivered run, or a run cancelled meanwhile) publishes nothing and
learns it was a duplicate. The same script sets the run's status record to its outcome, and
the admission before a run sets it ``running`` (:mod:`tasks.lifecycle` holds the scripts).

The stream is kept by age, not by length: an entry lives as long as the result it names
(``ttl_s``), so a consumer group that was away for days still finds every result published
meanwhile. Entries are small (about 70 bytes with a 30-character run id, measured) because
the result itself stays in its key; 7 days at 10 runs/s is about 6 million entries, 0.4 GB.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .lifecycle import Lifecycle, Publication
from .messages import RunResult, cap_size
from .redis_keys import FLEET, Keyspace
from .signatures import Signer

#: Bytes kept free under the size cap for the signature (about 40 per member, 20 members).
SIGNATURE_ROOM = 2048


def publication(result: RunResult) -> Publication:
    """What the stream entry and the status record say of ``result``: its outcome, score,
    scorecard result (empty when it has no scorecard or no score) and match."""
    card = result.scorecard
    score = "" if card is None or card.score is None else str(card.score)
    return Publication(run_id=result.run_id, outcome=result.outcome, score=score,
                       scorecard_result=(card.result or "") if card is not None else "",
                       match=result.match or "")


def sealed(result: RunResult, max_bytes: int, signer: Signer | None) -> str:
    """``result`` as published: capped to ``max_bytes``, then signed by ``signer`` (None:
    unsigned)."""
    if signer is None:
        return cap_size(result, max_bytes).to_json()
    return signer.seal(cap_size(result, max(1, max_bytes - SIGNATURE_ROOM)))


@dataclass
class Publisher:
    """Publishes results through one Redis connection (``redis.Redis``)."""

    redis: Any
    ttl_s: int = 7 * 24 * 3600
    """How long a result's key, its stream entry and the run's status record live."""
    worker: str = ""
    """The worker named in the status record of each run it admits."""
    signer: Signer | None = None
    """Signs every body (:meth:`body`); None publishes unsigned (tests of other parts)."""
    lifecycle: Lifecycle = field(init=False)
    """The fleet's own keys' (a tenant's: :meth:`lifecycle_of`)."""
    _lifecycles: dict[Keyspace, Lifecycle] = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        self.lifecycle = self._lifecycles[FLEET] = Lifecycle(self.redis, self.ttl_s)

    def lifecycle_of(self, keys: Keyspace) -> Lifecycle:
        """The scripts on the keys of ``keys`` (one tenant's, or the fleet's own)."""
        found = self._lifecycles.get(keys)
        if found is None:
            found = self._lifecycles[keys] = Lifecycle(self.redis, self.ttl_s, keys)
        return found

    def admit(self, run_id: str, expires_at: float | None = None,
              match: str | None = None, callback_url: str | None = None,
              keys: Keyspace = FLEET) -> int:
        """Before running ``run_id``: 0 when its result is published already (a duplicate,
        or cancelled while queued; not counted); -1 when ``expires_at`` (or the one its
        record holds) has passed; else which delivery of the run this is (1 for the
        first), and the run's record says it is running here (and keeps its
        ``callback_url``).

        Raises:
            redis.RedisError: Redis refused the count or could not be reached.
        """
        return self.lifecycle_of(keys).admit(run_id, self.worker, expires_at, match,
                                             callback_url)

    def body(self, result: RunResult, max_bytes: int) -> str:
        """:func:`sealed` with this publisher's signer."""
        return sealed(result, max_bytes, self.signer)

    def publish(self, result: RunResult, body: str, keys: Keyspace = FLEET) -> bool:
        """Publish ``body`` (``result`` as JSON) once, in the keys of ``keys``; False when a
        result for its run id already exists (a duplicate, or the run was cancelled).

        Raises:
            redis.RedisError: Redis refused the write or could not be reached.
        """
        return self.lifecycle_of(keys).publish(publication(result), body)
