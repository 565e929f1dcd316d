--[[
  settle: ends a request's hold by charging what was delivered, exactly once. The charge is the cost,
  capped at the hold (the excess is written off, never taken from the balance); with `forgive` the whole
  cost is written off. The charge counts in the key's daily and monthly spend of the current UTC window,
  the hold's token estimate is corrected to the actual count, and the ledger entry is put in the outbox in
  the same step, so Postgres can always be brought level with the balance.

  KEYS[1] state   KEYS[2] holds   KEYS[3] due   KEYS[4] outbox
  ARGV[1] request id   ARGV[2] cost (nano-USD)   ARGV[3] actual tokens   ARGV[4] forgive (1 or 0)

  Returns one of
    {'settled', chargedNano, writtenOffNano, availableAfterNano}
    {'settled', chargedNano, writtenOffNano, availableNano, 'again'}   settled before: the first result
    {'released'|'expired'|'missing', availableNano}                    no hold to charge against
]]

local state, holds, due, outbox = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local request_id = ARGV[1]
local cost, actual_tokens, forgive = tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4] == '1'

local value = redis.call('HGET', holds, request_id)
local closed = value and closed_status(value) or 'missing'
local hold = value and parse_hold(value)
if not hold then
  if closed == 'settled' then
    local charged, written_off = string.match(value, '^S|(%d+)|(%d+)$')
    return { 'settled', tonumber(charged), tonumber(written_off), available(state), 'again' }
  end
  return { closed, available(state) }
end

local now = now_ms()
local charged = forgive and 0 or math.min(cost, hold.amount)
local written_off = cost - charged
end_hold(state, hold, actual_tokens, now)

local k = hold.key .. ':'
local day, month = calendar(now)
local v = redis.call('HMGET', state, k .. 'dw', k .. 'ds', k .. 'mw', k .. 'ms')
local day_spent = num(v[1]) == day and num(v[2]) or 0
local month_spent = num(v[3]) == month and num(v[4]) or 0
redis.call('HSET', state, k .. 'dw', day, k .. 'ds', day_spent + charged, k .. 'mw', month, k .. 'ms', month_spent + charged)
redis.call('HINCRBY', state, 'bal', 0 - charged)

redis.call('HSET', holds, request_id, 'S|' .. charged .. '|' .. written_off)
redis.call('ZADD', due, now + TOMBSTONE_MS, request_id)
if charged > 0 or written_off > 0 then
  redis.call('HSET', outbox, request_id, hold.key .. '|' .. charged .. '|' .. written_off .. '|' .. now)
end
return { 'settled', charged, written_off, available(state) }
