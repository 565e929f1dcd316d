--[[
  address-hit: counts one request from an address in the current fixed window.

  KEYS[1] the address's counter for this window
  ARGV[1] window length (ms)

  Returns {count, remainingWindowMs}
]]

local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return { count, redis.call('PTTL', KEYS[1]) }
