--[[
  lease: a process's lease of one key's share of an account: an open hold (in `holds`, under the lease's
  own id) that takes money, concurrency slots, requests and tokens at once, so that the process admits
  and settles requests inside it without a call per request. Every limit counts the lease as it counts
  holds: the balance, the key's daily and monthly caps and the guardrail's budget (open holds count),
  concurrency, and requests and tokens per minute (counted when granted, in the two-second bucket of the
  grant; the process uses them only until that bucket ends, so each counts in the bucket of its use).
  A lease grows only while every limit keeps LEASE_SHARE times the growth for everyone else, so near a
  limit or the end of the balance no lease grows and each request is decided here on its own, exactly.
  A lease that is not renewed expires at its deadline like any hold (its process stopped): what it held
  returns, and nothing is charged.

  charge(state, holds, outbox, args, at, now): args[at..at+3] are
    lease id, key id, guardrail id ('' for none), count, then `count` charges of 4 values each:
    request id, charged (nano), written off (nano), record (the request's log row, kept with its ledger
    entry in the outbox; may be empty)
    The charges leave the balance and the lease (which held them; a lease that expired holds nothing)
    and join the key's and the guardrail's spend of the current UTC day and month. A charge whose request
    is in the outbox already was taken by an earlier call (sent again after its answer was lost): it is
    not taken twice.
    Returns {'charged', availableNano} or {'cold'}.

  lease_grow(state, holds, args, at, now): args[at..at+19] are
    lease id, key id, guardrail id, deadline (ms from now), amount, requests, tokens, slots to add,
    key rpm, key tpm, key concurrency, key daily cap, key monthly cap,
    account rpm, account tpm, account concurrency, guardrail budget   (every limit: 0 means none),
    open (1: the process holds this lease already; if it is gone, it expired and nothing is added),
    expired requests, expired tokens, their bucket (granted before and left unused when their bucket
    ended: they leave it while it is in view)
    Adds all four or nothing (slots in part: as many as each concurrency limit leaves LEASE_SHARE times
    room for, and none needed when the lease has some), and moves the deadline. Returns {'lease', granted
    (1 or 0), availableNano, nowMs, existed (1: the lease was open; 0: it is new, or it had expired),
    slots added} or {'cold'}.

  lease_shrink(state, holds, args, at, now): args[at..at+6] are
    lease id, amount kept, slots kept (the requests still open in it), unused requests, unused tokens,
    their bucket, deadline (ms from now)
    Returns what is not kept; unused requests and tokens leave the bucket they were counted in (while it
    is still in view). A lease that keeps nothing is removed. Returns {'shrunk', availableNano}.
]]

local LEASE_SHARE = 16

-- Takes requests and tokens the lease was granted in `bucket` and did not use (at most what it was
-- granted) out of that bucket, while it is in view. Nothing when the lease's grant is of another bucket
-- (the process's count is of an earlier one). Returns whether anything was taken back.
local function take_back(r, lease, requests, tokens, bucket)
  if lease.bucket ~= bucket then return false end
  requests, tokens = math.min(requests, lease.requests), math.min(tokens, lease.tokens)
  if requests <= 0 and tokens <= 0 then return false end
  adjust(r.ar, lease.bucket, -requests)
  adjust(r.kr, lease.bucket, -requests)
  adjust(r.at, lease.bucket, -tokens)
  adjust(r.kt, lease.bucket, -tokens)
  lease.requests, lease.tokens = lease.requests - requests, lease.tokens - tokens
  return true
end

local function charge(state, holds, outbox, args, at, now)
  local lease_id, key_id, guardrail, count = args[at], args[at + 1], args[at + 2], tonumber(args[at + 3])

  local r = read_records(state, key_id, guardrail, now)
  if not r then return { 'cold' } end
  local a, k, g = r.a, r.k, r.g

  local charged, entries = 0, {}
  for i = 0, count - 1 do
    local base = at + 4 + i * 4
    local request_id, amount, written_off = args[base], tonumber(args[base + 1]), tonumber(args[base + 2])
    -- A charge sent again after a call that was applied but not answered in time is in the outbox: it
    -- is taken once.
    if (amount > 0 or written_off > 0) and redis.call('HEXISTS', outbox, request_id) == 1 then
      amount, written_off = 0, 0
    end
    charged = charged + amount
    if amount > 0 or written_off > 0 then
      entries[#entries + 1] = request_id
      entries[#entries + 1] = key_id .. '|' .. string.format('%d|%d|%d|', amount, written_off, now) .. args[base + 3]
    end
  end

  local day, month = calendar(now)
  if k[K_DW] ~= day then k[K_DW], k[K_DS] = day, 0 end
  if k[K_MW] ~= month then k[K_MW], k[K_MS] = month, 0 end
  a[A_BAL] = a[A_BAL] - charged
  k[K_DS], k[K_MS] = k[K_DS] + charged, k[K_MS] + charged
  if g then
    if g[G_MW] ~= month then g[G_MW], g[G_MS] = month, 0 end
    g[G_MS] = g[G_MS] + charged
  end

  local value = redis.call('HGET', holds, lease_id)
  if value then
    local lease = parse_hold(value)
    local taken = math.min(charged, lease.amount)
    lease.amount = lease.amount - taken
    a[A_HELD], k[K_HELD] = a[A_HELD] - taken, k[K_HELD] - taken
    if g then g[G_HELD] = g[G_HELD] - taken end
    redis.call('HSET', holds, lease_id, hold_value(lease))
  end
  write_records(state, r)
  if #entries > 0 then redis.call('HSET', outbox, unpack(entries)) end
  return { 'charged', a[A_BAL] - a[A_HELD] }
end

local function lease_grow(state, holds, args, at, now)
  local lease_id, key_id, guardrail = args[at], args[at + 1], args[at + 2]
  local deadline_ms = tonumber(args[at + 3])
  local add_amount, add_requests = tonumber(args[at + 4]), tonumber(args[at + 5])
  local add_tokens, add_slots = tonumber(args[at + 6]), tonumber(args[at + 7])
  local key_rpm, key_tpm, key_conc = tonumber(args[at + 8]), tonumber(args[at + 9]), tonumber(args[at + 10])
  local key_daily, key_monthly = tonumber(args[at + 11]), tonumber(args[at + 12])
  local acct_rpm, acct_tpm, acct_conc = tonumber(args[at + 13]), tonumber(args[at + 14]), tonumber(args[at + 15])
  local guardrail_budget, expect_open = tonumber(args[at + 16]), args[at + 17] == '1'
  local expired_requests, expired_tokens, expired_bucket = tonumber(args[at + 18]), tonumber(args[at + 19]), tonumber(args[at + 20])

  local r = read_records(state, key_id, guardrail, now)
  if not r then return { 'cold' } end
  local a, k, g = r.a, r.k, r.g

  local bucket = math.floor(now / BUCKET_MS)
  local day, month = calendar(now)
  if k[K_DW] ~= day then k[K_DW], k[K_DS] = day, 0 end
  if k[K_MW] ~= month then k[K_MW], k[K_MS] = month, 0 end
  if g and g[G_MW] ~= month then g[G_MW], g[G_MS] = month, 0 end

  local value = redis.call('HGET', holds, lease_id)
  local lease = nil
  if value then lease = parse_hold(value) end
  local existed = lease ~= nil and lease.lease
  if expect_open and not existed then return { 'lease', 0, a[A_BAL] - a[A_HELD], now, 0 } end
  if not existed then
    lease = { key = key_id, amount = 0, tokens = 0, bucket = bucket, deadline = 0, guardrail = guardrail, free = false, slots = 0, requests = 0, lease = true }
  end
  local returned = existed and take_back(r, lease, expired_requests, expired_tokens, expired_bucket)

  -- Growth fits a limit when LEASE_SHARE times it is still within what the limit leaves.
  local function fits(add, limit, used)
    return add <= 0 or limit <= 0 or add * LEASE_SHARE <= limit - used
  end
  local function fits_rate(add, limit, rate)
    return fits(add, limit, rate_count(rate))
  end
  -- Slots are granted in part: as many as keep LEASE_SHARE times them for everyone else under each
  -- concurrency limit (a lease of a few slots still takes most admissions off the calls).
  local function slot_room(limit, used)
    if limit <= 0 then return add_slots end
    return math.max(0, math.floor((limit - used) / LEASE_SHARE))
  end
  add_slots = math.max(0, math.min(add_slots, slot_room(key_conc, k[K_CONC]), slot_room(acct_conc, a[A_CONC])))
  local avail = a[A_BAL] - a[A_HELD]
  local granted = add_amount + add_requests + add_tokens + add_slots > 0
    and (add_slots > 0 or lease.slots > 0)
    and (add_amount <= 0 or add_amount * LEASE_SHARE <= avail)
    and fits(add_amount, key_daily, k[K_DS] + k[K_HELD])
    and fits(add_amount, key_monthly, k[K_MS] + k[K_HELD])
    and (not g or fits(add_amount, guardrail_budget, g[G_MS] + g[G_HELD]))
    and fits_rate(add_requests, key_rpm, r.kr) and fits_rate(add_requests, acct_rpm, r.ar)
    and fits_rate(add_tokens, key_tpm, r.kt) and fits_rate(add_tokens, acct_tpm, r.at)

  if granted then
    a[A_HELD], a[A_CONC] = a[A_HELD] + add_amount, a[A_CONC] + add_slots
    r.ar[2], r.kr[2] = r.ar[2] + add_requests, r.kr[2] + add_requests
    r.at[2], r.kt[2] = r.at[2] + add_tokens, r.kt[2] + add_tokens
    k[K_HELD], k[K_CONC] = k[K_HELD] + add_amount, k[K_CONC] + add_slots
    if g then g[G_HELD] = g[G_HELD] + add_amount end
    if lease.bucket ~= bucket then lease.bucket, lease.requests, lease.tokens = bucket, 0, 0 end
    lease.amount, lease.slots = lease.amount + add_amount, lease.slots + add_slots
    lease.requests, lease.tokens = lease.requests + add_requests, lease.tokens + add_tokens
  end
  if granted or returned then write_records(state, r) end
  if granted or existed then
    lease.deadline = now + deadline_ms
    redis.call('HSET', holds, lease_id, hold_value(lease))
  end
  return { 'lease', granted and 1 or 0, a[A_BAL] - a[A_HELD], now, existed and 1 or 0, granted and add_slots or 0 }
end

local function lease_shrink(state, holds, args, at, now)
  local lease_id = args[at]
  local keep_amount, keep_slots = tonumber(args[at + 1]), tonumber(args[at + 2])
  local unused_requests, unused_tokens, unused_bucket = tonumber(args[at + 3]), tonumber(args[at + 4]), tonumber(args[at + 5])
  local deadline_ms = tonumber(args[at + 6])

  local value = redis.call('HGET', holds, lease_id)
  if not value then return { 'shrunk', available(state) } end
  local lease = parse_hold(value)
  local r = read_records(state, lease.key, lease.guardrail, now)
  if not r then
    redis.call('HDEL', holds, lease_id)
    return { 'cold' }
  end
  local a, k, g = r.a, r.k, r.g

  keep_amount, keep_slots = math.min(keep_amount, lease.amount), math.min(keep_slots, lease.slots)
  local freed_amount, freed_slots = lease.amount - keep_amount, lease.slots - keep_slots
  a[A_HELD], a[A_CONC] = a[A_HELD] - freed_amount, a[A_CONC] - freed_slots
  k[K_HELD], k[K_CONC] = k[K_HELD] - freed_amount, k[K_CONC] - freed_slots
  if g then g[G_HELD] = g[G_HELD] - freed_amount end

  take_back(r, lease, unused_requests, unused_tokens, unused_bucket)
  lease.amount, lease.slots = keep_amount, keep_slots

  write_records(state, r)
  if lease.amount == 0 and lease.slots == 0 then
    redis.call('HDEL', holds, lease_id)
  else
    lease.deadline = now + deadline_ms
    redis.call('HSET', holds, lease_id, hold_value(lease))
  end
  return { 'shrunk', a[A_BAL] - a[A_HELD] }
end
