--[[
  seed: loads an account's state from Postgres figures when Redis has none (new account, or Redis was
  emptied). Never overwrites a loaded state, so a late seed cannot undo charges.

  KEYS[1] state   KEYS[2] credits
  ARGV[1] balance (sum of the ledger, nano-USD)
  ARGV[2] number of recent credit entry ids that follow, then the ids (already in the balance)
  then the number of keys, and per key: key id, spend of the current UTC day and of the UTC month (nano-USD)
  then, per guardrail: guardrail id, spend of the current UTC month by its keys (nano-USD)

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
local at = 3 + count
local keys_end = at + 1 + 3 * tonumber(ARGV[at])
for i = at + 1, keys_end - 1, 3 do
  local k = unpack_record(nil, KEY_FIELDS)
  k[K_DW], k[K_DS], k[K_MW], k[K_MS] = day, tonumber(ARGV[i + 1]), month, tonumber(ARGV[i + 2])
  redis.call('HSET', state, 'k:' .. ARGV[i], pack_record(k))
end
for i = keys_end, #ARGV, 2 do
  local g = unpack_record(nil, GUARDRAIL_FIELDS)
  g[G_MW], g[G_MS] = month, tonumber(ARGV[i + 1])
  redis.call('HSET', state, 'g:' .. ARGV[i], pack_record(g))
end
return 'seeded'
