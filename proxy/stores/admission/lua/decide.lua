--[[
  decide: runs a batch of one account's decisions in one atomic call, in order: every settle, release
  and admit that reached this process in the same event-loop turn, and the process's lease operations.
  Each decision is the one its own file describes (settle.lua, release.lua, admit.lua, lease.lua);
  batching only saves round trips and per-call overhead.

  KEYS[1] state   KEYS[2] holds   KEYS[3] outbox
  ARGV[1]: the time (ms) after which the caller no longer waits for the answer. A call that runs later
    (sent again by the client library after a connection closed) is refused whole with an error: the
    caller has treated it as unconfirmed and may have sent its decisions again.
  ARGV[2..]: a sequence of decisions, each its name and then its arguments:
    'settle'  request id, cost, actual tokens, forgive, record
    'release' request id
    'admit'   request id, key id, hold, tokens, 5 key limits, 3 account limits, hold deadline,
              guardrail id, guardrail budget, free allowance
    'charge'  lease id, key id, guardrail id, count, then per charge: request id, charged, written off,
              record
    'grow'    lease id, key id, guardrail id, deadline, amount, requests, tokens, slots, 5 key limits,
              3 account limits, guardrail budget, open, expired requests, expired tokens, their bucket
    'shrink'  lease id, amount kept, slots kept, unused requests, unused tokens, their bucket, deadline

  Returns one reply per decision, in order (see each decision for its reply).
]]

local state, holds, outbox = KEYS[1], KEYS[2], KEYS[3]
local now = now_ms()
if now > tonumber(ARGV[1]) then return redis.error_reply('LATE decide: the caller stopped waiting') end
local replies, at = {}, 2
while at <= #ARGV do
  local name = ARGV[at]
  if name == 'admit' then
    replies[#replies + 1] = admit(state, holds, ARGV, at + 1, now)
    at = at + 17
  elseif name == 'settle' then
    replies[#replies + 1] = settle(state, holds, outbox, ARGV, at + 1, now)
    at = at + 6
  elseif name == 'release' then
    replies[#replies + 1] = release(state, holds, outbox, ARGV, at + 1, now)
    at = at + 2
  elseif name == 'charge' then
    replies[#replies + 1] = charge(state, holds, outbox, ARGV, at + 1, now)
    at = at + 5 + 4 * tonumber(ARGV[at + 4])
  elseif name == 'grow' then
    replies[#replies + 1] = lease_grow(state, holds, ARGV, at + 1, now)
    at = at + 22
  elseif name == 'shrink' then
    replies[#replies + 1] = lease_shrink(state, holds, ARGV, at + 1, now)
    at = at + 8
  else
    return redis.error_reply('decide: unknown decision ' .. tostring(name))
  end
end
return replies
