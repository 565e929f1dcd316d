--[[
  Shared prelude of the admission scripts; the loader puts it in front of each script.

  One account's hot state lives in three keys with the account's hash tag, so every script touches one
  cluster slot:
    state   HASH  'a'    -> "bal|held|conc|rw|r0..r6|t0..t6|fd|fc"  account: balance, open holds,
                             in-flight, requests and tokens per minute (rw: the latest ten-second bucket
                             counted in; r0..r6 and t0..t6: requests and tokens of that bucket and the six
                             before it), free requests of the UTC day (fd, fc)
                  'k:K'  -> "held|conc|rw|r0..r6|t0..t6|dw|ds|mw|ms"  key K: the same, and spend of
                             the UTC day (dw, ds) and month (mw, ms); K is the first key of the rotation
                             lineage, whose windows every key rotated from it shares
                  'g:G'  -> "held|mw|ms"  guardrail G: open holds and spend of the UTC month
    holds   HASH  request id -> open hold "keyId|holdNano|tokens|bucket|deadlineMs|guardrailId|free"
                  (open holds only; guardrailId may be empty; free is 1 for a request on the free allowance)
    outbox  HASH  request id -> charge "keyId|chargedNano|writtenOffNano|atMs|record", until Postgres has
                  it; record: the request's log row (JSON, may be empty), so that both reach Postgres.
                  An entry recovery wrote to Postgres stays for a while as "~keyId|charged|writtenOff|at|",
                  so a settle or lease charge sent again after a lost answer still finds it taken
  Money is integer nano-USD; amounts stay below 2^53 so Lua numbers hold them exactly. Each record is one
  field, read and written whole: one HMGET and one HSET per decision instead of one call per counter.
]]

local DAY_MS = 86400000

local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- Rate limits count ten-second buckets: the current one and the six before it. Every span of 60 seconds
-- lies within the seven buckets the last admission inside it saw, so none holds more than the limit.
local BUCKET_MS, BUCKETS = 10000, 7
-- A record's rate part starts at its bucket; requests and tokens of each bucket in view follow, newest
-- first, at these offsets from it.
local REQUESTS, TOKENS = 1, 1 + BUCKETS

-- Positions in the records.
local A_BAL, A_HELD, A_CONC, A_RW, A_FD, A_FC = 1, 2, 3, 4, 19, 20
local K_HELD, K_CONC, K_RW, K_DW, K_DS, K_MW, K_MS = 1, 2, 3, 18, 19, 20, 21
local G_HELD, G_MW, G_MS = 1, 2, 3
local ACCOUNT_FIELDS, KEY_FIELDS, GUARDRAIL_FIELDS = 20, 21, 3

-- Records are read with one string.match and written with one string.format: a pattern per length.
local RECORD_PATTERN, RECORD_FORMAT = {}, {}
for _, count in ipairs({ GUARDRAIL_FIELDS, ACCOUNT_FIELDS, KEY_FIELDS }) do
  local numbers, formats = {}, {}
  for i = 1, count do numbers[i], formats[i] = '(%-?%d+)', '%d' end
  RECORD_PATTERN[count] = '^' .. table.concat(numbers, '|') .. '$'
  RECORD_FORMAT[count] = table.concat(formats, '|')
end

-- Records written before rate windows had buckets held (minute, requests now, requests before, tokens
-- now, tokens before) at the rate part: both minutes' counts become the last bucket of that minute's,
-- stricter for a minute than the counts they replace, never looser.
local LEGACY = { [ACCOUNT_FIELDS] = { fields = 10, rate = A_RW }, [KEY_FIELDS] = { fields = 11, rate = K_RW } }
local function from_legacy(parts, rate)
  local record = {}
  for i = 1, rate - 1 do record[i] = parts[i] end
  record[rate] = (parts[rate] + 1) * (60000 / BUCKET_MS) - 1
  for age = 0, BUCKETS - 1 do record[rate + REQUESTS + age], record[rate + TOKENS + age] = 0, 0 end
  record[rate + REQUESTS] = parts[rate + 1] + parts[rate + 2]
  record[rate + TOKENS] = parts[rate + 3] + parts[rate + 4]
  for i = rate + 5, #parts do record[#record + 1] = parts[i] end
  return record
end

-- "1|2|3" -> {1, 2, 3}; a missing record reads as all zeros.
local function unpack_record(value, count)
  local record = {}
  if value then
    record = { string.match(value, RECORD_PATTERN[count]) }
    if #record == 0 then
      for part in string.gmatch(value, '[^|]+') do record[#record + 1] = tonumber(part) or 0 end
      local legacy = LEGACY[count]
      if legacy and #record == legacy.fields then record = from_legacy(record, legacy.rate) end
    end
  end
  for i = 1, count do record[i] = tonumber(record[i]) or 0 end
  return record
end

-- %d writes integers exactly up to 2^63 (plain concatenation would write 1e+15).
local function pack_record(record)
  return string.format(RECORD_FORMAT[#record], unpack(record))
end

-- Days since 1970-01-01 to (year, month) and back (proleptic Gregorian, after H. Hinnant).
local function civil_from_days(z)
  z = z + 719468
  local era = math.floor(z / 146097)
  local doe = z - era * 146097
  local yoe = math.floor((doe - math.floor(doe / 1460) + math.floor(doe / 36524) - math.floor(doe / 146096)) / 365)
  local doy = doe - (365 * yoe + math.floor(yoe / 4) - math.floor(yoe / 100))
  local mp = math.floor((5 * doy + 2) / 153)
  local month = mp < 10 and mp + 3 or mp - 9
  local year = yoe + era * 400 + (month <= 2 and 1 or 0)
  return year, month
end

local function days_from_civil(year, month)
  if month <= 2 then year = year - 1 end
  local era = math.floor(year / 400)
  local yoe = year - era * 400
  local mp = month > 2 and month - 3 or month + 9
  local doy = math.floor((153 * mp + 2) / 5)
  local doe = yoe * 365 + math.floor(yoe / 4) - math.floor(yoe / 100) + doy
  return era * 146097 + doe - 719468
end

-- Calendar windows of an instant: day index, month index (year * 12 + month - 1), and their ends in ms.
local function calendar(now)
  local day = math.floor(now / DAY_MS)
  local year, month = civil_from_days(day)
  local next_year, next_month = year, month + 1
  if next_month > 12 then next_year, next_month = year + 1, 1 end
  return day, year * 12 + month - 1, (day + 1) * DAY_MS, days_from_civil(next_year, next_month) * DAY_MS
end

-- Moves a record's rate part (at `at`) to `bucket`: buckets that leave the view are forgotten. A clock
-- that went back moves nothing.
local function roll(record, at, bucket)
  local shift = bucket - record[at]
  if shift <= 0 then return end
  for _, first in ipairs({ at + REQUESTS, at + TOKENS }) do
    for age = BUCKETS - 1, 0, -1 do
      record[first + age] = age >= shift and record[first + age - shift] or 0
    end
  end
  record[at] = bucket
end

-- What the buckets in view hold, from `first` (the rate part's requests or tokens).
local function rate_count(record, first)
  local total = 0
  for age = 0, BUCKETS - 1 do total = total + record[first + age] end
  return total
end

-- Adds `delta` (negative to take back) to what was counted in `bucket`, while it is in view; `at` is the
-- rate part, `first` its requests or tokens.
local function adjust(record, at, first, bucket, delta)
  local age = record[at] - bucket
  if age >= 0 and age < BUCKETS then record[first + age] = math.max(0, record[first + age] + delta) end
end

-- Milliseconds until `cost` more fits under `limit` (at least 1 s): until enough of the oldest buckets
-- have left the view. A cost above the limit never fits; it is told to wait a minute.
local function rate_retry_ms(record, at, first, now, limit, cost)
  if cost > limit then return 60000 end
  local excess = rate_count(record, first) + cost - limit
  for age = BUCKETS - 1, 0, -1 do
    excess = excess - record[first + age]
    if excess <= 0 then return math.max(1000, (record[at] - age + BUCKETS) * BUCKET_MS - now) end
  end
  return 1000
end

-- Holds placed before the guardrail and free fields existed read as having neither. A process's lease
-- (lease.lua) is a hold with two more fields: the concurrency slots it takes and the requests it counted.
local function parse_hold(value)
  local key_id, amount, tokens, bucket, deadline, rest = string.match(value, '^([^|]+)|(%d+)|(%d+)|(-?%d+)|(%d+)(.*)$')
  local guardrail, free, slots, requests = string.match(rest, '^|([^|]*)|([01])|(%d+)|(%d+)$')
  if not guardrail then guardrail, free = string.match(rest, '^|([^|]*)|([01])$') end
  return {
    key = key_id, amount = tonumber(amount), tokens = tonumber(tokens), bucket = tonumber(bucket),
    deadline = tonumber(deadline), guardrail = guardrail or '', free = free == '1',
    slots = tonumber(slots) or 1, requests = tonumber(requests), lease = slots ~= nil,
  }
end

local function hold_value(hold)
  local value = hold.key .. string.format('|%d|%d|%d|%d|', hold.amount, hold.tokens, hold.bucket, hold.deadline) .. hold.guardrail .. (hold.free and '|1' or '|0')
  if hold.lease then value = value .. string.format('|%d|%d', hold.slots, hold.requests) end
  return value
end

-- Ends an open hold: its amount leaves `held`, its slot returns, its token estimate becomes
-- `actual_tokens` in the bucket it was counted in (while in view), and `charged` leaves the balance and joins the
-- key's (and guardrail's) spend of the current UTC day and month. A released free request gives its
-- place in the free allowance back (`refund`). Returns the available balance after.
local function end_hold(state, hold, actual_tokens, charged, now, refund)
  local kf = 'k:' .. hold.key
  local gf = hold.guardrail ~= '' and ('g:' .. hold.guardrail) or nil
  local v = redis.call('HMGET', state, 'a', kf, gf or 'a')
  local a, k = unpack_record(v[1], ACCOUNT_FIELDS), unpack_record(v[2], KEY_FIELDS)
  local bucket, delta = math.floor(now / BUCKET_MS), actual_tokens - hold.tokens
  roll(a, A_RW, bucket)
  roll(k, K_RW, bucket)
  adjust(a, A_RW, A_RW + TOKENS, hold.bucket, delta)
  adjust(k, K_RW, K_RW + TOKENS, hold.bucket, delta)
  local day, month = calendar(now)
  if k[K_DW] ~= day then k[K_DW], k[K_DS] = day, 0 end
  if k[K_MW] ~= month then k[K_MW], k[K_MS] = month, 0 end
  a[A_BAL], a[A_HELD], a[A_CONC] = a[A_BAL] - charged, a[A_HELD] - hold.amount, a[A_CONC] - hold.slots
  k[K_HELD], k[K_CONC], k[K_DS], k[K_MS] = k[K_HELD] - hold.amount, k[K_CONC] - hold.slots, k[K_DS] + charged, k[K_MS] + charged
  if refund and hold.free and a[A_FD] == day then a[A_FC] = math.max(0, a[A_FC] - 1) end
  if gf then
    local g = unpack_record(v[3], GUARDRAIL_FIELDS)
    if g[G_MW] ~= month then g[G_MW], g[G_MS] = month, 0 end
    g[G_HELD], g[G_MS] = g[G_HELD] - hold.amount, g[G_MS] + charged
    redis.call('HSET', state, 'a', pack_record(a), kf, pack_record(k), gf, pack_record(g))
  else
    redis.call('HSET', state, 'a', pack_record(a), kf, pack_record(k))
  end
  return a[A_BAL] - a[A_HELD]
end

-- The account's, a key's and (when `guardrail` is not '') a guardrail's records, read with one HMGET;
-- nil when the account is not loaded. write_records puts them back with one HSET.
local function read_records(state, key_id, guardrail)
  local kf = 'k:' .. key_id
  local gf = guardrail ~= '' and ('g:' .. guardrail) or nil
  local v = redis.call('HMGET', state, 'a', kf, gf or 'a')
  if not v[1] then return nil end
  return {
    a = unpack_record(v[1], ACCOUNT_FIELDS), k = unpack_record(v[2], KEY_FIELDS),
    g = gf and unpack_record(v[3], GUARDRAIL_FIELDS), kf = kf, gf = gf,
  }
end

local function write_records(state, r)
  if r.g then
    redis.call('HSET', state, 'a', pack_record(r.a), r.kf, pack_record(r.k), r.gf, pack_record(r.g))
  else
    redis.call('HSET', state, 'a', pack_record(r.a), r.kf, pack_record(r.k))
  end
end

local function available(state)
  local a = unpack_record(redis.call('HGET', state, 'a'), ACCOUNT_FIELDS)
  return a[A_BAL] - a[A_HELD]
end

-- A settle or release that finds no open hold: already settled (its charge still in the outbox) or
-- nothing to end (settled and written to Postgres, released, expired, or never admitted).
local function ended(state, outbox, request_id)
  local entry = redis.call('HGET', outbox, request_id)
  if entry then
    local charged, written_off = string.match(entry, '^[^|]+|(%d+)|(%d+)|')
    return { 'settled', tonumber(charged), tonumber(written_off), available(state), 'again' }
  end
  return { 'missing', available(state) }
end
