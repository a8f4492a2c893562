"""The webhook schedule, in Redis: a worker restart loses nothing.

* :data:`~tasks.redis_keys.WEBHOOKS_DUE` holds every delivery not yet done, scored by when
  its next attempt is due; :data:`~tasks.redis_keys.WEBHOOKS_PENDING` the same runs, scored
  by when they were scheduled (the oldest undelivered's age).
* The run's status record holds the delivery's state (``webhook``: ``pending``,
  ``delivered``, ``failed``), its URL and every attempt with its answer
  (:class:`~tasks.status.Webhook` reads them).

Each step is one Lua script. :meth:`Schedule.plan` schedules a run's delivery once (a
result heard twice is scheduled once) and acknowledges its stream entry in the same step.
:meth:`Schedule.claim` takes due deliveries and pushes each past its lease, so that a
sender that dies mid-attempt leaves it due again (at least once). :meth:`Schedule.start`
numbers the attempt and reads the result; :meth:`Schedule.finish` records the answer and
either ends the delivery or schedules the next attempt, unless that would come after
``give_up_after_s``. Times are Redis's clock.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import Any

from ..redis_keys import (
    FLEET,
    WEBHOOKS_DUE,
    WEBHOOKS_GROUP,
    WEBHOOKS_PENDING,
    Keyspace,
    keyspace,
    run_of,
    run_ref,
)
from .transport import Answer

_NOW = """
local clock = redis.call('TIME')
local now = tonumber(clock[1]) + tonumber(clock[2]) / 1000000
local function done(run_id)
  redis.call('ZREM', KEYS[2], run_id)
  redis.call('ZREM', KEYS[3], run_id)
end
"""

# KEYS: status, due, pending, results stream. ARGV: run id, url, group, entry id.
_PLAN = _NOW + """
redis.call('XACK', KEYS[4], ARGV[3], ARGV[4])
if redis.call('EXISTS', KEYS[1]) == 0 or redis.call('HEXISTS', KEYS[1], 'webhook') == 1 then
  return 0
end
redis.call('HSET', KEYS[1], 'webhook', 'pending', 'webhook.url', ARGV[2],
           'webhook.since', string.format('%.6f', now))
redis.call('ZADD', KEYS[2], 'NX', now, ARGV[1])
redis.call('ZADD', KEYS[3], 'NX', now, ARGV[1])
return 1
"""

# KEYS: due. ARGV: lease (s), count.
_CLAIM = """
local clock = redis.call('TIME')
local now = tonumber(clock[1]) + tonumber(clock[2]) / 1000000
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, ARGV[2])
for _, run_id in ipairs(due) do
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[1]), run_id)
end
return due
"""

# KEYS: status, due, pending, result. ARGV: run id, give up after (s). Returns {attempt,
# url, match, body}, or {0, ''} when the delivery is over elsewhere, {0, 'failed'} when it
# ends here: past its time without an attempt (no worker was sending), or its result
# expired. The attempt is recorded 'sending' until its answer; one a dead sender left so
# is marked lost when the next starts.
_START = _NOW + """
if redis.call('HGET', KEYS[1], 'webhook') ~= 'pending' then
  done(ARGV[1])
  return {0, ''}
end
local function fail(reason)
  redis.call('HSET', KEYS[1], 'webhook', 'failed', 'webhook.reason', reason)
  done(ARGV[1])
  return {0, 'failed'}
end
local tried = tonumber(redis.call('HGET', KEYS[1], 'webhook.attempts') or '0')
local field = 'webhook.attempt.' .. tried
local last = redis.call('HGET', KEYS[1], field)
local answer = ''
if last then
  local record = cjson.decode(last)
  if record['answer'] == 'sending' then
    record['answer'] = 'lost: its sender stopped before an answer'
    redis.call('HSET', KEYS[1], field, cjson.encode(record))
  end
  answer = record['answer']
end
local since = tonumber(redis.call('HGET', KEYS[1], 'webhook.since'))
if now > since + tonumber(ARGV[2]) then
  if tried == 0 then
    return fail(string.format('not delivered within %d s: no attempt was made (no worker '
                              .. 'was sending)', tonumber(ARGV[2])))
  end
  return fail(string.format('no 2xx answer in %d attempts over %d s (the last: %s)', tried,
                            math.floor(now - since), answer))
end
local body = redis.call('GET', KEYS[4])
if not body then
  return fail('its result expired before it was delivered')
end
local attempt = tried + 1
redis.call('HSET', KEYS[1], 'webhook.attempts', attempt, 'webhook.attempt.' .. attempt,
           cjson.encode({n = attempt, at = now, answer = 'sending'}))
return {attempt, redis.call('HGET', KEYS[1], 'webhook.url'),
        redis.call('HGET', KEYS[1], 'match') or '', body}
"""

# KEYS: status, due, pending. ARGV: run id, attempt, its record (JSON), 'delivered' |
# 'retry' | 'failed', delay (s), give up after (s), reason, body kind. Returns the state.
_FINISH = _NOW + """
if redis.call('EXISTS', KEYS[1]) == 0 then
  done(ARGV[1])
  return 'expired'
end
redis.call('HSET', KEYS[1], 'webhook.attempt.' .. ARGV[2], ARGV[3], 'webhook.body', ARGV[8])
local state = redis.call('HGET', KEYS[1], 'webhook')
if state ~= 'pending' then
  return state
end
local outcome, reason = ARGV[4], ARGV[7]
if outcome == 'retry' then
  local since = tonumber(redis.call('HGET', KEYS[1], 'webhook.since'))
  local next = now + tonumber(ARGV[5])
  if next <= since + tonumber(ARGV[6]) then
    redis.call('ZADD', KEYS[2], next, ARGV[1])
    return 'pending'
  end
  outcome = 'failed'
  reason = string.format('no 2xx answer in %s attempts over %d s (the last: %s)',
                         ARGV[2], math.floor(now - since), reason)
end
redis.call('HSET', KEYS[1], 'webhook', outcome)
if outcome == 'failed' then
  redis.call('HSET', KEYS[1], 'webhook.reason', reason)
end
done(ARGV[1])
return outcome
"""


@dataclass(frozen=True)
class Started:
    """A claimed delivery's attempt: its number, where it goes, the run's match and the
    published result, and the run's tenant (None: the fleet's own run)."""

    run_id: str
    attempt: int
    url: str
    match: str
    body: bytes
    tenant: str | None = None


def delivery_id(run_id: str, keys: Keyspace = FLEET) -> str:
    """A delivery's member in the schedule's sets (:func:`~tasks.redis_keys.run_ref`)."""
    return run_ref(run_id, keys)


def backoff_s(attempt: int, first_s: float, max_s: float) -> float:
    """The wait after failed ``attempt``: exponential (``first_s`` doubling, at most
    ``max_s``), with jitter (between half and all of it, so senders spread out)."""
    full = min(max_s, first_s * 2.0 ** (attempt - 1))
    return float(full / 2 + random.uniform(0, full / 2))


class Schedule:
    """The schedule's scripts over one Redis client (``redis.Redis``)."""

    def __init__(self, redis: Any) -> None:
        self.redis = redis
        self._plan = redis.register_script(_PLAN)
        self._claim = redis.register_script(_CLAIM)
        self._start = redis.register_script(_START)
        self._finish = redis.register_script(_FINISH)

    def plan(self, run_id: str, url: str, entry_id: Any, client: Any = None,
             keys: Keyspace = FLEET) -> Any:
        """Schedule ``run_id``'s delivery (a run in ``keys``) to ``url`` unless it has one,
        and acknowledge its results-stream entry (on ``client``: a pipeline). 1 when
        scheduled."""
        delivery = delivery_id(run_id, keys)
        return self._plan(keys=[*_keys(delivery), keys.results_stream],
                          args=[delivery, url, WEBHOOKS_GROUP, entry_id], client=client)

    def claim(self, lease_s: float, count: int = 1) -> list[str]:
        """Up to ``count`` due deliveries, each now leased for ``lease_s``."""
        return [_text(r) for r in self._claim(keys=[WEBHOOKS_DUE], args=[lease_s, count])]

    def start(self, delivery: str, give_up_after_s: float) -> Started | str:
        """Number and record the next attempt of a delivery (a member :meth:`claim`
        returned); when there is none to make, the delivery's end here (``failed``: past
        ``give_up_after_s`` since it was scheduled, or its result expired), or ``""`` (it
        ended elsewhere)."""
        keys, run_id = run_of(delivery)
        reply = self._start(keys=[*_keys(delivery), keys.result(run_id)],
                            args=[delivery, give_up_after_s])
        if int(reply[0]) == 0:
            return _text(reply[1])
        attempt, url, match, body = reply
        return Started(run_id, int(attempt), _text(url), _text(match), bytes(body),
                       keys.tenant)

    def finish(self, started: Started, answer: Answer, when: float, wait: tuple[float, float],
               kind: str) -> str:
        """Record ``answer`` (sent at ``when``, a ``kind`` body); end the delivery or
        schedule the next attempt after ``wait[0]`` seconds unless that would come more
        than ``wait[1]`` seconds after it was scheduled. Returns its state."""
        record = json.dumps({"n": started.attempt, "at": round(when, 3), "answer": answer.text,
                             "ms": answer.ms})
        outcome = ("delivered" if answer.delivered else "failed" if answer.final
                   else "retry")
        delivery = delivery_id(started.run_id, keyspace(started.tenant))
        return _text(self._finish(keys=_keys(delivery), args=[
            delivery, started.attempt, record, outcome, wait[0], wait[1], answer.text,
            kind]))

def oldest_undelivered_s(redis: Any) -> tuple[int, float]:
    """How many deliveries are not done, and how long ago the oldest of them was scheduled
    (0: none), by Redis's clock."""
    with redis.pipeline(transaction=False) as pipe:
        pipe.zcard(WEBHOOKS_PENDING).zrange(WEBHOOKS_PENDING, 0, 0, withscores=True).time()
        count, first, (seconds, micros) = pipe.execute()
    if not first:
        return int(count), 0.0
    return int(count), max(0.0, int(seconds) + int(micros) / 1e6 - float(first[0][1]))


def _keys(delivery: str) -> list[str]:
    keys, run_id = run_of(delivery)
    return [keys.status(run_id), WEBHOOKS_DUE, WEBHOOKS_PENDING]


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value.decode() if isinstance(value, bytes) else str(value)

