"""The Lua scripts of evalfleet's broker: each one step on the Redis server.

Keys are kombu's own (``unacked_index``, ``unacked``, the queue lists) and evalfleet's
doorbells (:data:`tasks.redis_keys.DOORBELL_KEY`). Scripts flagged ``allow-oom`` run on a
full Redis (``maxmemory``, ``noeviction``): each is about memory-neutral. Flags need Redis 7.
"""

from __future__ import annotations

#: Keys: ``unacked_index``, ``unacked``, then the queue lists, most urgent first.
#: Args: time, then how many doorbells lead the queue lists.
#: Pops the first message found and records it as unacknowledged (``[payload, exchange,
#: routing_key]`` under its delivery tag, as kombu's QoS does) in the same step, so a
#: message is always in a list or in the unacked hash, whatever happens to the worker that
#: took it. Returns ``{list, payload, 1}``, or nothing after deleting the doorbells (every
#: queue is empty, so no message waits behind them). A payload that is not a kombu message
#: is returned unrecorded (``0`` last), as ``BRPOP`` would return it.
TAKE = """#!lua flags=allow-oom
local bells = tonumber(ARGV[2])
for i = 3 + bells, #KEYS do
  local item = redis.call('RPOP', KEYS[i])
  if item then
    local ok, message = pcall(cjson.decode, item)
    local props = ok and type(message) == 'table' and message['properties']
    local info = type(props) == 'table' and props['delivery_info']
    if type(info) ~= 'table' or type(props['delivery_tag']) ~= 'string' then
      return {KEYS[i], item, 0}
    end
    local tag = props['delivery_tag']
    redis.call('ZADD', KEYS[1], ARGV[1], tag)
    redis.call('HSET', KEYS[2], tag, '[' .. item .. ',' .. cjson.encode(info['exchange'])
               .. ',' .. cjson.encode(info['routing_key']) .. ']')
    return {KEYS[i], item, 1}
  end
end
for i = 3, 2 + bells do redis.call('DEL', KEYS[i]) end
return false
"""

#: Keys: the queue list, its doorbell. Args: the payload.
#: Queues a message and rings its queue's doorbell, both or neither (refused whole on a
#: full Redis: the sender learns its message was not queued).
PUT = """#!lua
redis.call('LPUSH', KEYS[1], ARGV[1])
redis.call('LPUSH', KEYS[2], '1')
return 1
"""

#: Keys: the queue list, its doorbell, the run's status record. Args: the payload, the
#: intake entry that carries the run. As :data:`PUT`, once per entry: the record's
#: ``sent`` names the entry whose message was queued, in the same step, so a forwarder
#: killed after sending and before acknowledging the entry (which another forwarder then
#: reads again) sends nothing twice. 0 when the entry's message was queued before.
PUT_ONCE = """#!lua
if redis.call('HSETNX', KEYS[3], 'sent', ARGV[2]) == 0 then
  return 0
end
redis.call('LPUSH', KEYS[1], ARGV[1])
redis.call('LPUSH', KEYS[2], '1')
return 1
"""

#: Keys: ``unacked_index``, ``unacked``. Args: time, delivery tag, payload.
REMEMBER = """#!lua flags=allow-oom
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2])
redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
return 1
"""

#: Keys: ``unacked_index``, ``unacked``. Args: delivery tag.
FORGET = """#!lua flags=allow-oom
redis.call('ZREM', KEYS[1], ARGV[1])
return redis.call('HDEL', KEYS[2], ARGV[1])
"""

#: Keys: ``unacked_index``, ``unacked``, the queue lists. Args: delivery tag, LPUSH or RPUSH,
#: the payload marked redelivered. Nothing happens when the tag is no longer unacked
#: (acknowledged, or restored by another worker meanwhile).
RESTORE = """#!lua flags=allow-oom
if redis.call('HDEL', KEYS[2], ARGV[1]) == 0 then return 0 end
redis.call('ZREM', KEYS[1], ARGV[1])
for i = 3, #KEYS do redis.call(ARGV[2], KEYS[i], ARGV[3]) end
return 1
"""
