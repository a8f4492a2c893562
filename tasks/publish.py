"""Publication: exactly one result per run id, however many times the run executes.

One Lua script does all three steps atomically, so a worker that dies half-way cannot
leave a result key without its stream entry:

1. ``SET evalfleet:result:<run_id> <json> NX EX <ttl>`` — only the first writer wins;
2. ``XADD evalfleet:results MINID ~ <now - ttl> * run_id <id> outcome <outcome>
   score <score> scorecard_result <win|draw|loss>`` — a small entry that names the result;
3. ``PUBLISH evalfleet:results <run_id>``.

A later writer (a redelivered run) publishes nothing and learns it was a duplicate.

The stream is kept by age, not by length: an entry lives as long as the result it names
(``ttl_s``), so a consumer group that was away for days still finds every result published
meanwhile. Entries are small (about 70 bytes with a 30-character run id, measured) because
the result itself stays in its key; 7 days at 10 runs/s is about 6 million entries, 0.4 GB.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .messages import RunResult
from .redis_keys import RESULTS_CHANNEL, RESULTS_STREAM, deliveries_key, result_key

_PUBLISH = """
if redis.call('SET', KEYS[1], ARGV[2], 'NX', 'EX', ARGV[3]) then
  local now = redis.call('TIME')
  local oldest = (tonumber(now[1]) - tonumber(ARGV[3])) * 1000
  redis.call('XADD', KEYS[2], 'MINID', '~', string.format('%d', oldest), '*',
             'run_id', ARGV[1], 'outcome', ARGV[4], 'score', ARGV[5],
             'scorecard_result', ARGV[6])
  redis.call('PUBLISH', ARGV[7], ARGV[1])
  return 1
end
return 0
"""

# Before a run, one round trip: 0 if its result is published already, else this delivery's
# number (the count lives as long as a result would).
_ADMIT = """
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 0
end
local delivery = redis.call('INCR', KEYS[2])
redis.call('EXPIRE', KEYS[2], ARGV[1])
return delivery
"""


def entry_fields(result: RunResult) -> list[str]:
    """The stream entry's values after the run id: outcome, score, scorecard result
    (empty strings when the run has no scorecard or no score)."""
    card = result.scorecard
    score = "" if card is None or card.score is None else str(card.score)
    return [result.outcome, score, (card.result or "") if card is not None else ""]


@dataclass
class Publisher:
    """Publishes results through one Redis connection (``redis.Redis``)."""

    redis: Any
    ttl_s: int = 7 * 24 * 3600
    """How long a result's key, and its stream entry, live."""

    def __post_init__(self) -> None:
        self._script = self.redis.register_script(_PUBLISH)
        self._admit = self.redis.register_script(_ADMIT)

    def admit(self, run_id: str) -> int:
        """Before running ``run_id``: 0 when its result is published already (a duplicate,
        not counted), else which delivery of the run this is (1 for the first).

        Raises:
            redis.RedisError: Redis refused the count or could not be reached.
        """
        keys = [result_key(run_id), deliveries_key(run_id)]
        return int(self._admit(keys=keys, args=[self.ttl_s]))

    def publish(self, result: RunResult, body: str) -> bool:
        """Publish ``body`` (``result`` as JSON) once; False when a result for its run id
        already exists (a duplicate).

        Raises:
            redis.RedisError: Redis refused the write or could not be reached.
        """
        keys = [result_key(result.run_id), RESULTS_STREAM]
        args = [result.run_id, body, self.ttl_s, *entry_fields(result), RESULTS_CHANNEL]
        return bool(self._script(keys=keys, args=args))
