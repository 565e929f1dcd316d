--[[
  seed: loads an account's state from Postgres figures when Redis has none (new account, or Redis was
  emptied). Never overwrites a loaded state, so a late seed cannot undo charges.

  KEYS[1] state   KEYS[2] credits
  ARGV[1] balance (sum of the ledger, nano-USD)
  ARGV[2] number of recent credit entry ids that follow, then the ids (already in the balance)
  then, per key: key id, spend of the current UTC day, spend of the current UTC month (nano-USD)

  Returns 'seeded' or 'loaded' (state already there; nothing changed).
]]

local state, credits = KEYS[1], KEYS[2]
if redis.call('HEXISTS', state, 'bal') == 1 then return 'loaded' end

local now = now_ms()
local day, month = calendar(now)
redis.call('HSET', state, 'bal', tonumber(ARGV[1]), 'held', 0, 'conc', 0)
local count = tonumber(ARGV[2])
for i = 3, 2 + count do redis.call('ZADD', credits, now, ARGV[i]) end
for i = 3 + count, #ARGV, 3 do
  local k = ARGV[i] .. ':'
  redis.call('HSET', state, k .. 'dw', day, k .. 'ds', tonumber(ARGV[i + 1]), k .. 'mw', month, k .. 'ms', tonumber(ARGV[i + 2]))
end
return 'seeded'
