--[[
  release: ends a request's hold without a charge (the request was refused or failed before any
  answer reached the client). Returns the concurrency slot and takes the token estimate back.

  KEYS[1] state   KEYS[2] holds   KEYS[3] due
  ARGV[1] request id

  Returns {'released', availableAfterNano}, or {'settled'|'released'|'expired'|'missing', availableNano}
  when the hold had already ended (nothing changes).
]]

local state, holds, due = KEYS[1], KEYS[2], KEYS[3]
local request_id = ARGV[1]

local value = redis.call('HGET', holds, request_id)
local hold = value and parse_hold(value)
if not hold then return { value and closed_status(value) or 'missing', available(state), 'again' } end

local now = now_ms()
end_hold(state, hold, 0, now)
redis.call('HSET', holds, request_id, 'R')
redis.call('ZADD', due, now + TOMBSTONE_MS, request_id)
return { 'released', available(state) }
