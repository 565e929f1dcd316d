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
if redis.call('HEXISTS', state, 'a') == 1 then return 'loaded' end

local now = now_ms()
local day, month = calendar(now)
local a = unpack_record(nil, ACCOUNT_FIELDS)
a[A_BAL] = tonumber(ARGV[1])
redis.call('HSET', state, 'a', pack_record(a))
local count = tonumber(ARGV[2])
for i = 3, 2 + count do redis.call('ZADD', credits, now, ARGV[i]) end
for i = 3 + count, #ARGV, 3 do
  local k = unpack_record(nil, KEY_FIELDS)
  k[K_DW], k[K_DS], k[K_MW], k[K_MS] = day, tonumber(ARGV[i + 1]), month, tonumber(ARGV[i + 2])
  redis.call('HSET', state, 'k:' .. ARGV[i], pack_record(k))
end
return 'seeded'
