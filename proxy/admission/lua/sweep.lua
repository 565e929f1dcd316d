--[[
  sweep: ends the account's holds whose deadline has passed (the request never settled: its process
  stopped, or admission was never confirmed) and purges tombstones past their retention. An expired hold
  charges nothing: its amount and concurrency slot return, and it is marked expired so that a late
  settle charges nothing either.

  KEYS[1] state   KEYS[2] holds   KEYS[3] due
  ARGV[1] most entries to handle in this call

  Returns {expiredRequestIds, remainingEntries}
]]

local state, holds, due = KEYS[1], KEYS[2], KEYS[3]
local limit = tonumber(ARGV[1])

local now = now_ms()
local expired = {}
for _, request_id in ipairs(redis.call('ZRANGEBYSCORE', due, '-inf', now, 'LIMIT', 0, limit)) do
  local value = redis.call('HGET', holds, request_id)
  local hold = value and parse_hold(value)
  if hold then
    end_hold(state, hold, hold.tokens, now)
    redis.call('HSET', holds, request_id, 'E')
    redis.call('ZADD', due, now + TOMBSTONE_MS, request_id)
    expired[#expired + 1] = request_id
  else
    redis.call('HDEL', holds, request_id)
    redis.call('ZREM', due, request_id)
  end
end
return { expired, redis.call('ZCARD', due) }
