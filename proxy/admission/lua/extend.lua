--[[
  extend: moves the deadline of holds that are still open (long streams) so the sweep leaves them alone.

  KEYS[1] holds   KEYS[2] due
  ARGV[1] new deadline (ms from now)   ARGV[2..] request ids

  Returns the number of holds extended.
]]

local holds, due = KEYS[1], KEYS[2]
local deadline = now_ms() + tonumber(ARGV[1])
local extended = 0
for i = 2, #ARGV do
  local value = redis.call('HGET', holds, ARGV[i])
  if value and parse_hold(value) then
    redis.call('ZADD', due, 'XX', deadline, ARGV[i])
    extended = extended + 1
  end
end
return extended
