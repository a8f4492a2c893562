"""The waiting room's Lua scripts: each one step on the Redis server (keys:
:mod:`tasks.redis_keys`'s admission keys).

A run's score in its waiting room is ``(9 - priority) * 2^40 + tag``: the most urgent
priority first; within one, the lowest *tag*. A tag is the virtual time of the run's match
(its *flow*; runs without a match are one flow): one more than the later of the flow's
last tag and the room's clock, the tag of the last run taken. So a match that parked
10,000 runs has tags 1…10,000, and a match arriving when the clock reads 40 gets 41, 42…:
its runs are taken in turn with the long one's, not after it (start-time fair queueing).
"""

from __future__ import annotations

#: Keys: waiting room, its flows, the owner's requests, count and in-flight set, the
#: queue's depth list, the active set, the run's status record, this minute's rate key.
#: Args: run id, flow, priority, the stored request, ``<queue> <owner>``, the owner's max
#: in flight and max per minute ('' for none), '1' when the owner refuses over quota.
#: Parks a run once (a run whose request is parked, or whose message was sent, is left
#: alone: 0). An owner that refuses over quota gets the quota's name back, nothing parked.
PARK = """#!lua
if redis.call('HEXISTS', KEYS[3], ARGV[1]) == 1
    or redis.call('HEXISTS', KEYS[8], 'sent') == 1 then
  return 0
end
if ARGV[8] == '1' then
  local waiting = tonumber(redis.call('GET', KEYS[4]) or '0')
  if ARGV[6] ~= '' and redis.call('ZCARD', KEYS[5]) + waiting >= tonumber(ARGV[6]) then
    return 'max_in_flight'
  end
  local admitted = tonumber(redis.call('GET', KEYS[9]) or '0')
  if ARGV[7] ~= '' and admitted + waiting >= tonumber(ARGV[7]) then
    return 'max_per_minute'
  end
end
local clock = tonumber(redis.call('HGET', KEYS[2], '') or '0')
local flow = 'f:' .. ARGV[2]
local tag = math.max(clock, tonumber(redis.call('HGET', KEYS[2], flow) or '0')) + 1
redis.call('HSET', KEYS[2], flow, string.format('%.0f', tag))
local score = (9 - tonumber(ARGV[3])) * 1099511627776 + tag
redis.call('ZADD', KEYS[1], string.format('%.0f', score), ARGV[1])
redis.call('HSET', KEYS[3], ARGV[1], ARGV[4])
redis.call('INCR', KEYS[4])
redis.call('RPUSH', KEYS[6], '1')
redis.call('SADD', KEYS[7], ARGV[5])
return 1
"""

#: Keys: waiting room, its flows, the owner's requests, count and in-flight set, the
#: queue's depth list, the active set, this minute's rate key, the admitted counts.
#: Args: how many, ``<queue> <owner>``, now (seconds), the owner.
#: Takes up to that many runs, first by score: each goes into the in-flight set and is
#: counted in this minute's rate; the room's clock moves to the last one's tag. Returns
#: ``[run id, stored request, …]``; the requests stay until their messages are queued.
TAKE = """#!lua
local taken = redis.call('ZPOPMIN', KEYS[1], ARGV[1])
local out = {}
for i = 1, #taken, 2 do
  local run_id = taken[i]
  redis.call('HSET', KEYS[2], '', string.format('%.0f', tonumber(taken[i + 1]) % 1099511627776))
  redis.call('ZADD', KEYS[5], ARGV[3], run_id)
  redis.call('LPOP', KEYS[6])
  out[#out + 1] = run_id
  out[#out + 1] = redis.call('HGET', KEYS[3], run_id) or ''
end
local n = #taken / 2
if n > 0 then
  redis.call('DECRBY', KEYS[4], n)
  redis.call('INCRBY', KEYS[8], n)
  redis.call('EXPIRE', KEYS[8], 120)
  redis.call('HINCRBY', KEYS[9], ARGV[4], n)
end
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('SREM', KEYS[7], ARGV[2])
  redis.call('DEL', KEYS[2])
end
return out
"""

#: Keys: the lease, the active set. Args: the holder, milliseconds, the waiting rooms' key
#: prefix (``evalfleet:admission:waiting:``), then the priority steps after the first
#: (kombu's ``<queue>:<step>`` lists). The admitter's look at the fleet, in one step: the
#: lease (taken when free, renewed when the holder's: 1 held, 2 just taken; 0 alone
#: when another holds it), then each room with runs
#: waiting and how many (``<queue> <owner>``, count, …), then each of those queues and how
#: many runs are in its lists (queue, depth, …). The rooms' and lists' keys are derived
#: from the active set, so the script has no shebang (it names keys it was not given).
LOOK = """
local holder = redis.call('GET', KEYS[1])
local lease = 2
if holder == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  lease = 1
elseif holder then
  return {0}
else
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
end
local rooms, queues, seen = {}, {}, {}
for _, member in ipairs(redis.call('SMEMBERS', KEYS[2])) do
  local queue, owner = string.match(member, '^(%S+) (%S+)$')
  if queue then
    local waiting = redis.call('ZCARD', ARGV[3] .. queue .. ':' .. owner)
    if waiting > 0 then
      rooms[#rooms + 1] = member
      rooms[#rooms + 1] = waiting
      if not seen[queue] then
        seen[queue] = true
        local depth = redis.call('LLEN', queue)
        for i = 4, #ARGV do depth = depth + redis.call('LLEN', queue .. ':' .. ARGV[i]) end
        queues[#queues + 1] = queue
        queues[#queues + 1] = depth
      end
    end
  end
end
return {lease, rooms, queues}
"""
