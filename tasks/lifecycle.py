"""A run's life in Redis: every transition of its status record is one Lua script, so that
no two can interleave (a wire contract: the keys are :mod:`tasks.redis_keys`'s).

* **queued** — :func:`submission`, by the clients: the request goes into the intake stream
  and the record is made, in one step; :meth:`Lifecycle.queue`, by the intake's forwarder
  (for requests added by other means). The record names the intake entry that carries the
  request (``entry``), and is made only if the run has none: a run id submitted twice is
  queued once (a client adds nothing; the forwarder drops an entry the record does not
  name), so a platform may submit again whenever it is unsure (after a failover); the
  match's index gets the run.
* **running** — :meth:`Lifecycle.admit`, by the worker that takes it: nothing if its
  result is published already (a duplicate, or cancelled while queued); ``-1`` if its
  ``expires_at`` has passed (the worker publishes it ``expired`` without starting it);
  else the delivery's number, and the record says which worker and attempt.
* **the outcome** — :meth:`Lifecycle.publish`: the result (``SET NX``), its stream entry,
  its announcement and the record's final status, at once (:mod:`tasks.publish`). While
  the archive is on (:data:`~tasks.redis_keys.ARCHIVE_GROUP` exists), the result and the
  record have no expiry until the archiver has them in the store (:mod:`tasks.archive`).
* **cancelled** — :meth:`Lifecycle.cancel`: when the run has a record and no result, the
  ``cancelled`` result is published as any other, and the run id goes out on
  :data:`~tasks.redis_keys.CANCELS_CHANNEL` (its worker stops the sandbox). Cancel and
  publication are both ``SET NX`` on the result key inside a script: whichever comes
  first is the run's one result.

Times are Redis's own clock (``TIME``), Unix seconds. The record and the match index live
as long as the result (``ttl_s``), and are renewed by each transition. A submission is
refused while :data:`~tasks.redis_keys.ARCHIVE_REFUSAL_KEY` says why (the archive's backlog
would outgrow Redis's memory).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .redis_keys import ARCHIVE_GROUP, ARCHIVE_REFUSAL_KEY, FLEET, Keyspace

#: Every script starts here: ``now`` as text (``<seconds>.<microseconds>``, Redis's clock),
#: and ``index_match``, which records a run's match and adds the run to the match's index.
_NOW = """
local clock = redis.call('TIME')
local now = clock[1] .. '.' .. string.format('%06d', clock[2])
local function index_match(status, index, match, run_id, ttl)
  if match ~= '' then
    redis.call('HSET', status, 'match', match)
    redis.call('ZADD', index, 'NX', now, run_id)
    redis.call('EXPIRE', index, ttl)
  end
end
"""

# The queued record (KEYS: status, match index. ARGV: ttl, match ('' for none), expires_at
# ('' or seconds), run id, callback url ('' for none)), naming the intake entry that carries
# the request (`entry`).
_RECORD = _NOW + """
local function record(entry)
  redis.call('HSET', KEYS[1], 'status', 'queued', 'queued_at', now, 'entry', entry)
  if ARGV[3] ~= '' then
    redis.call('HSET', KEYS[1], 'expires_at', ARGV[3])
  end
  if ARGV[5] ~= '' then
    redis.call('HSET', KEYS[1], 'callback_url', ARGV[5])
  end
  index_match(KEYS[1], KEYS[2], ARGV[2], ARGV[4], ARGV[1])
  redis.call('EXPIRE', KEYS[1], ARGV[1])
end
"""
# The forwarder's, for the intake entry ARGV[6]: 1 when it made the record (a request added
# by other means), 2 when the record names this entry (or none: an older client's), 0 when
# it names another (the run id was submitted before: this entry is a duplicate, not sent).
_QUEUE = _RECORD + """
local entry = redis.call('HGET', KEYS[1], 'entry')
if entry then
  if entry == ARGV[6] then return 2 end
  return 0
end
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 2
end
record(ARGV[6])
return 1
"""
# The clients': unless the run has a record, the request (ARGV[6]) goes into the intake
# stream (KEYS[3]) and the record names its entry; a Redis that refuses the entry (full)
# writes no record either. 1 when added, 0 when the run id is known (nothing added).
# Refused first, with the reason the archivers left (the key ARGV[7], only read: an
# argument, not one of KEYS, which Redis's ACLs would require a tenant's user to be allowed
# to write), while the archive's backlog would outgrow Redis's memory.
_SUBMIT = _RECORD + """
local refusal = redis.call('GET', ARGV[7])
if refusal then
  return redis.error_reply('EVALFLEET_REFUSED ' .. refusal)
end
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 0
end
record(redis.call('XADD', KEYS[3], '*', 'request', ARGV[6]))
return 1
"""

# KEYS: result, deliveries, status, match index. ARGV: ttl, worker, expires_at ('' or
# seconds), match ('' for none), run id, callback url ('' for none).
_ADMIT = _NOW + """
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 0
end
local expires = ARGV[3]
if expires == '' then
  expires = redis.call('HGET', KEYS[3], 'expires_at') or ''
end
if expires ~= '' and tonumber(now) > tonumber(expires) then
  return -1
end
local delivery = redis.call('INCR', KEYS[2])
redis.call('EXPIRE', KEYS[2], ARGV[1])
redis.call('HSET', KEYS[3], 'status', 'running', 'running_at', now, 'worker', ARGV[2],
           'attempt', delivery)
if ARGV[6] ~= '' then
  redis.call('HSET', KEYS[3], 'callback_url', ARGV[6])
end
index_match(KEYS[3], KEYS[4], ARGV[4], ARGV[5], ARGV[1])
redis.call('EXPIRE', KEYS[3], ARGV[1])
return delivery
"""

#: The archive's floor: while the archivers' group exists on the results stream (the
#: archive is on), the id of its oldest entry not yet acknowledged (else its last delivered
#: one); nil when there is no such group.
_ARCHIVE_FLOOR = """
local function archive_floor(stream)
  if redis.call('EXISTS', stream) == 0 then
    return nil
  end
  for _, info in ipairs(redis.call('XINFO', 'GROUPS', stream)) do
    local group = {}
    for i = 1, #info, 2 do
      group[info[i]] = info[i + 1]
    end
    if group['name'] == '@GROUP@' then
      local pending = redis.call('XPENDING', stream, '@GROUP@')
      if pending[1] > 0 then
        return pending[2]
      end
      return group['last-delivered-id']
    end
  end
  return nil
end
""".replace("@GROUP@", ARCHIVE_GROUP)

#: The publication (KEYS: result, stream, status, match index. ARGV: run id, body, ttl,
#: outcome, score, scorecard result, results channel, match): ``published`` is 1 when
#: this body is the run's result. With the archive on (its group exists), the result and
#: the status record are kept without expiry (the archiver starts their TTL once the
#: result is archived) and the stream is trimmed by age only up to the archive's floor.
_PUBLISHING = _ARCHIVE_FLOOR + """
local published = 0
local floor = archive_floor(KEYS[2])
local set
if floor then
  set = redis.call('SET', KEYS[1], ARGV[2], 'NX')
else
  set = redis.call('SET', KEYS[1], ARGV[2], 'NX', 'EX', ARGV[3])
end
if set then
  published = 1
  local oldest = string.format('%d', (tonumber(clock[1]) - tonumber(ARGV[3])) * 1000)
  if floor and tonumber(string.match(floor, '^(%d+)')) <= tonumber(oldest) then
    oldest = floor
  end
  redis.call('XADD', KEYS[2], 'MINID', '~', oldest, '*',
             'run_id', ARGV[1], 'outcome', ARGV[4], 'score', ARGV[5],
             'scorecard_result', ARGV[6])
  redis.call('PUBLISH', ARGV[7], ARGV[1])
  redis.call('HSET', KEYS[3], 'status', ARGV[4], ARGV[4] .. '_at', now)
  index_match(KEYS[3], KEYS[4], ARGV[8], ARGV[1], ARGV[3])
  if floor then
    redis.call('PERSIST', KEYS[3])
  else
    redis.call('EXPIRE', KEYS[3], ARGV[3])
  end
end
"""
_PUBLISH = _NOW + _PUBLISHING + "return published\n"

# As _PUBLISHING, and ARGV[9]: the cancels channel. Returns {what, the status before}.
_CANCEL = _NOW + """
local was = redis.call('HGET', KEYS[3], 'status') or ''
if redis.call('EXISTS', KEYS[1]) == 1 then
  return {'finished', was}
end
if was == '' then
  return {'unknown', ''}
end
""" + _PUBLISHING + """
redis.call('PUBLISH', ARGV[9], ARGV[1])
return {'cancelled', was}
"""


@dataclass(frozen=True)
class Publication:
    """What a result's publication writes besides its body."""

    run_id: str
    outcome: str
    score: str = ""
    scorecard_result: str = ""
    match: str = ""


@dataclass(frozen=True)
class Call:
    """One script call, for any client: ``redis.Redis``, ``redis.asyncio.Redis`` (await
    what :meth:`on` returns) or a pipeline of either."""

    script: str
    keys: list[str]
    args: list[Any]

    def on(self, client: Any) -> Any:
        """Send it (``EVAL``: Redis caches the script)."""
        return client.eval(self.script, len(self.keys), *self.keys, *self.args)


def submission(request_json: str, run_id: str, match: str | None,
               expires_at: float | None, ttl_s: int, callback_url: str | None = None,
               keys: Keyspace = FLEET) -> Call:
    """Add a request to the intake stream of ``keys`` and record its run ``queued`` (see
    the module), with its ``callback_url``. The reply: 1 when recorded, 0 when the run had
    a record already; an error ``EVALFLEET_REFUSED <reason>`` while the archive's backlog
    refuses new runs."""
    return Call(_SUBMIT, [keys.status(run_id), keys.match(match or ""), keys.intake],
                [ttl_s, match or "", _seconds(expires_at), run_id, callback_url or "",
                 request_json, ARCHIVE_REFUSAL_KEY])


def cancellation(publication: Publication, body: str, ttl_s: int,
                 keys: Keyspace = FLEET) -> Call:
    """:meth:`Lifecycle.cancel` as a :class:`Call` on the keys of ``keys``; read its reply
    with :meth:`Cancelled.of`."""
    return Call(_CANCEL, _publication_keys(publication, keys),
                [*_publication_args(publication, body, ttl_s, keys), keys.cancels_channel])


@dataclass(frozen=True)
class Cancelled:
    """What :meth:`Lifecycle.cancel` found: ``cancelled`` (the run was ``was``: queued or
    running), ``finished`` (its result was published already, as ``was``) or ``unknown``
    (no record: never submitted, expired, or sent by a client without the record)."""

    run_id: str
    what: str
    was: str = ""

    @classmethod
    def of(cls, run_id: str, reply: Any) -> Cancelled:
        """What the cancel script's ``reply`` says."""
        what, was = reply
        return cls(run_id, _text(what), _text(was))


class Lifecycle:
    """The scripts of a run's life over one Redis client (``redis.Redis``), on the keys of
    one tenant (``keys``; the fleet's own by default)."""

    def __init__(self, redis: Any, ttl_s: int = 7 * 24 * 3600,
                 keys: Keyspace = FLEET) -> None:
        self.redis, self.ttl_s, self.keys = redis, ttl_s, keys
        self._queue = redis.register_script(_QUEUE)
        self._admit = redis.register_script(_ADMIT)
        self._publish = redis.register_script(_PUBLISH)
        self._cancel = redis.register_script(_CANCEL)

    def queue(self, run_id: str, match: str | None, expires_at: float | None,
              entry: str = "", client: Any = None, callback_url: str | None = None) -> Any:
        """Record the run as ``queued`` by intake entry ``entry`` unless it has a record
        (on ``client``: a pipeline to batch it with others), with its ``callback_url`` when
        it has one. Returns 1 when recorded, 2 when the record names this entry (or none),
        0 when it names another: a duplicate (or the pipeline)."""
        keys = [self.keys.status(run_id), self.keys.match(match or "")]
        return self._queue(keys=keys, args=[self.ttl_s, match or "", _seconds(expires_at),
                                            run_id, callback_url or "", entry], client=client)

    def admit(self, run_id: str, worker: str, expires_at: float | None = None,
              match: str | None = None, callback_url: str | None = None) -> int:
        """0: published already; -1: expired before it started; else the delivery (and
        the record keeps ``callback_url``, for a run sent without a ``queued`` record)."""
        keys = [self.keys.result(run_id), self.keys.deliveries(run_id),
                self.keys.status(run_id), self.keys.match(match or "")]
        return int(self._admit(keys=keys, args=[self.ttl_s, worker, _seconds(expires_at),
                                                match or "", run_id, callback_url or ""]))

    def publish(self, publication: Publication, body: str) -> bool:
        """Publish ``body`` as the run's result unless it has one; whether it did."""
        return bool(self._publish(keys=_publication_keys(publication, self.keys),
                                  args=_publication_args(publication, body, self.ttl_s,
                                                         self.keys)))

    def cancel(self, publication: Publication, body: str) -> Cancelled:
        """Cancel the run with ``body`` as its result, if it has a record and no result."""
        call = cancellation(publication, body, self.ttl_s, self.keys)
        return Cancelled.of(publication.run_id, self._cancel(keys=call.keys, args=call.args))


def _publication_keys(publication: Publication, keys: Keyspace) -> list[str]:
    return [keys.result(publication.run_id), keys.results_stream,
            keys.status(publication.run_id), keys.match(publication.match)]


def _publication_args(publication: Publication, body: str, ttl_s: int,
                      keys: Keyspace) -> list[Any]:
    return [publication.run_id, body, ttl_s, publication.outcome, publication.score,
            publication.scorecard_result, keys.results_channel, publication.match]


def _seconds(moment: float | None) -> str:
    return "" if moment is None else repr(float(moment))


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
