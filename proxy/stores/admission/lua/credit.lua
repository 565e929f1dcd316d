--[[
  credit: applies a credit that Postgres has already recorded to the live balance, once per ledger
  entry. When the account's state is not loaded, nothing happens: loading it reads the ledger, which
  includes the credit.

  KEYS[1] state   KEYS[2] credits (ZSET of applied ledger entry ids, kept for three days)
  ARGV[1] ledger entry id   ARGV[2] amount (nano-USD)

  Returns {'ok', availableNano}, {'again', availableNano} when already applied, or {'cold'}.
]]

local state, credits = KEYS[1], KEYS[2]
local entry, amount = ARGV[1], tonumber(ARGV[2])

local value = redis.call('HGET', state, 'a')
if not value then return { 'cold' } end
local a, legacy = unpack_record(value, ACCOUNT_FIELDS)
if redis.call('ZSCORE', credits, entry) then return { 'again', a[A_BAL] - a[A_HELD] } end
local now = now_ms()
a[A_BAL] = a[A_BAL] + amount
redis.call('HSET', state, 'a', pack_record(a))
-- A record of the earlier layout keeps its requests and tokens per minute, as read_records would.
if legacy then
  for i, field in ipairs({ 'ar', 'at' }) do
    redis.call('HSETNX', state, field, pack_record(read_rate(nil, legacy[i], math.floor(now / BUCKET_MS))))
  end
end
redis.call('ZADD', credits, now, entry)
redis.call('ZREMRANGEBYSCORE', credits, '-inf', now - 3 * DAY_MS)
return { 'ok', a[A_BAL] - a[A_HELD] }
