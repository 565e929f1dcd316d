--[[
  settle: ends a request's hold by charging what was delivered, exactly once. The charge is the cost,
  capped at the hold (the excess is written off, never taken from the balance); with `forgive` the whole
  cost is written off. The charge counts in the key's daily and monthly spend of the current UTC window,
  the hold's token estimate is corrected to the actual count, and the ledger entry is put in the outbox in
  the same step, so Postgres can always be brought level with the balance.

  settle(state, holds, outbox, args, at, now): args[at..at+4] are
    request id, cost (nano-USD), actual tokens, forgive (1 or 0), record (the request's log row, kept
    with the ledger entry in the outbox; may be empty)

  Returns one of
    {'settled', chargedNano, writtenOffNano, availableAfterNano}
    {'settled', chargedNano, writtenOffNano, availableNano, 'again'}   settled before, charge in the outbox
    {'missing', availableNano}                                         no open hold: nothing charged
]]

local function settle(state, holds, outbox, args, at, now)
  local request_id = args[at]
  local cost, actual_tokens, forgive = tonumber(args[at + 1]), tonumber(args[at + 2]), args[at + 3] == '1'

  local value = redis.call('HGET', holds, request_id)
  if not value then return ended(state, outbox, request_id) end
  local hold = parse_hold(value)

  local charged = forgive and 0 or math.min(cost, hold.amount)
  local written_off = cost - charged
  local avail = end_hold(state, hold, actual_tokens, charged, now, false)
  redis.call('HDEL', holds, request_id)
  if charged > 0 or written_off > 0 then
    redis.call('HSET', outbox, request_id,
      hold.key .. '|' .. string.format('%d|%d|%d|', charged, written_off, now) .. args[at + 4])
  end
  return { 'settled', charged, written_off, avail }
end
