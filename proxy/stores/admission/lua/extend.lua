--[[
  extend: moves the deadline of holds that are still open (long streams) so the sweep leaves them alone.

  KEYS[1] holds
  ARGV[1] new deadline (ms from now)   ARGV[2..] request ids

  Returns the number of holds extended.
]]

local holds = KEYS[1]
local deadline = now_ms() + tonumber(ARGV[1])
local extended = 0
for i = 2, #ARGV do
  local value = redis.call('HGET', holds, ARGV[i])
  if value then
    local hold = parse_hold(value)
    hold.deadline = deadline
    redis.call('HSET', holds, ARGV[i], hold_value(hold))
    extended = extended + 1
  end
end
return extended
