--[[
  release: ends a request's hold without a charge (the request was refused or failed before any
  answer reached the client). Returns the concurrency slot and takes the token estimate back.

  release(state, holds, outbox, args, at, now): args[at] is the request id

  Returns {'released', availableAfterNano}, or what settle returns for a hold that is not open (nothing
  changes).
]]

local function release(state, holds, outbox, args, at, now)
  local request_id = args[at]

  local value = redis.call('HGET', holds, request_id)
  if not value then return ended(state, outbox, request_id) end
  local avail = end_hold(state, parse_hold(value), 0, 0, now, true)
  redis.call('HDEL', holds, request_id)
  return { 'released', avail }
end
