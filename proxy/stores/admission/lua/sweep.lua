--[[
  sweep: ends the account's open holds whose deadline has passed (the request never settled: its
  process stopped, or admission was never confirmed). An expired hold charges nothing: its amount and
  concurrency slot return, and a settle arriving later finds no hold and charges nothing either.

  KEYS[1] state   KEYS[2] holds

  Returns {expiredRequestIds, openHoldsLeft}
]]

local state, holds = KEYS[1], KEYS[2]
local now = now_ms()
local expired, left = {}, 0
local entries = redis.call('HGETALL', holds)
for i = 1, #entries, 2 do
  local hold = parse_hold(entries[i + 1])
  if hold.deadline <= now then
    end_hold(state, hold, hold.tokens, 0, now, false)
    redis.call('HDEL', holds, entries[i])
    expired[#expired + 1] = entries[i]
  else
    left = left + 1
  end
end
return { expired, left }
