--[[
  Shared prelude of the admission scripts; the loader puts it in front of each script.

  One account's hot state lives in three keys with the account's hash tag, so every script touches one
  cluster slot:
    state   HASH  'a'    -> "bal|held|conc|fd|fc"  account: balance, open holds, in-flight, free requests
                             of the UTC day (fd, fc)
                  'k:K'  -> "held|conc|dw|ds|mw|ms"  key K: open holds, in-flight, spend of the UTC day
                             (dw, ds) and month (mw, ms); K is the first key of the rotation lineage,
                             whose windows every key rotated from it shares
                  'g:G'  -> "held|mw|ms"  guardrail G: open holds and spend of the UTC month
                  'ar', 'at', 'kr:K', 'kt:K' -> "bucket|c0|c1|..|c30"  requests and tokens per minute of
                             the account and of key K: the latest two-second bucket counted in, and the
                             counts of that bucket and the thirty before it
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

-- Rate limits count two-second buckets: the current one and the thirty before it. Every span of 60
-- seconds lies within the buckets the last admission inside it saw, so none holds more than the limit.
local BUCKET_MS, BUCKETS = 2000, 31

-- Positions in the records.
local A_BAL, A_HELD, A_CONC, A_FD, A_FC = 1, 2, 3, 4, 5
local K_HELD, K_CONC, K_DW, K_DS, K_MW, K_MS = 1, 2, 3, 4, 5, 6
local G_HELD, G_MW, G_MS = 1, 2, 3
local ACCOUNT_FIELDS, KEY_FIELDS, GUARDRAIL_FIELDS, RATE_FIELDS = 5, 6, 3, 1 + BUCKETS

-- Records are read with one string.match and written with one string.format: a pattern per length (a
-- pattern holds at most 32 captures, which the rate records fill).
local RECORD_PATTERN, RECORD_FORMAT = {}, {}
for _, count in ipairs({ GUARDRAIL_FIELDS, ACCOUNT_FIELDS, KEY_FIELDS, RATE_FIELDS }) do
  local numbers, formats = {}, {}
  for i = 1, count do numbers[i], formats[i] = '(%-?%d+)', '%d' end
  RECORD_PATTERN[count] = '^' .. table.concat(numbers, '|') .. '$'
  RECORD_FORMAT[count] = table.concat(formats, '|')
end

-- Records written before rate limits had buckets of their own held (minute, requests now, requests
-- before, tokens now, tokens before) inside the account's and the key's record: spend and free requests
-- move to their places, and both minutes' requests and tokens are returned beside the record
-- (read_records counts them in the current bucket: stricter for a minute, never looser).
local LEGACY = {
  [ACCOUNT_FIELDS] = { fields = 10, kept = { 1, 2, 3, 9, 10 }, rate = 4 },
  [KEY_FIELDS] = { fields = 11, kept = { 1, 2, 8, 9, 10, 11 }, rate = 3 },
}

-- "1|2|3" -> {1, 2, 3}; a missing record reads as all zeros. A record of the earlier layout is read in
-- this one, and its requests and tokens per minute are returned beside it.
local function unpack_record(value, count)
  local record = {}
  if value then
    record = { string.match(value, RECORD_PATTERN[count]) }
    if #record == 0 then
      for part in string.gmatch(value, '[^|]+') do record[#record + 1] = tonumber(part) or 0 end
      local legacy = LEGACY[count]
      if legacy and #record == legacy.fields then
        local at, old = legacy.rate, record
        record = {}
        for i, position in ipairs(legacy.kept) do record[i] = old[position] end
        return record, { old[at + 1] + old[at + 2], old[at + 3] + old[at + 4] }
      end
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

-- A rate record is {bucket, count of that bucket, of the one before, ..}: the latest bucket counted in.
-- roll() moves it to `bucket`, forgetting what leaves the view; a clock that went back moves nothing.
local function roll(rate, bucket)
  local shift = bucket - rate[1]
  if shift <= 0 then return end
  for age = BUCKETS - 1, 0, -1 do rate[2 + age] = age >= shift and rate[2 + age - shift] or 0 end
  rate[1] = bucket
end

-- What the buckets in view hold.
local function rate_count(rate)
  local total = 0
  for i = 2, RATE_FIELDS do total = total + rate[i] end
  return total
end

-- Adds `delta` (negative to take back) to what was counted in `bucket`, while it is in view.
local function adjust(rate, bucket, delta)
  local age = rate[1] - bucket
  if age >= 0 and age < BUCKETS then rate[2 + age] = math.max(0, rate[2 + age] + delta) end
end

-- Milliseconds until `cost` more fits under `limit` (at least 1 s): until enough of the oldest buckets
-- have left the view. A cost above the limit never fits; it is told to wait a minute.
local function rate_retry_ms(rate, now, limit, cost)
  if cost > limit then return 60000 end
  local excess = rate_count(rate) + cost - limit
  for age = BUCKETS - 1, 0, -1 do
    excess = excess - rate[2 + age]
    if excess <= 0 then return math.max(1000, (rate[1] - age + BUCKETS) * BUCKET_MS - now) end
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

-- The account's, a key's and (when `guardrail` is not '') a guardrail's records, and the account's and
-- the key's requests and tokens per minute moved to the bucket of `now`, read with one HMGET; nil when
-- the account is not loaded. write_records puts them back with one HSET.
-- A rate record read from `value` and moved to `bucket`; with none stored yet, the counts an account's
-- or key's record of the earlier layout held (`legacy`, if any) are counted in that bucket.
local function read_rate(value, legacy, bucket)
  local rate = unpack_record(value, RATE_FIELDS)
  roll(rate, bucket)
  if legacy and not value then rate[2] = legacy end
  return rate
end

local function read_records(state, key_id, guardrail, now)
  local kf = 'k:' .. key_id
  local gf = guardrail ~= '' and ('g:' .. guardrail) or nil
  local rf = { 'ar', 'at', 'kr:' .. key_id, 'kt:' .. key_id }
  local v = redis.call('HMGET', state, 'a', kf, rf[1], rf[2], rf[3], rf[4], gf or 'a')
  if not v[1] then return nil end
  local bucket = math.floor(now / BUCKET_MS)
  local a, a_legacy = unpack_record(v[1], ACCOUNT_FIELDS)
  local k, k_legacy = unpack_record(v[2], KEY_FIELDS)
  return {
    a = a, k = k, g = gf and unpack_record(v[7], GUARDRAIL_FIELDS), kf = kf, gf = gf, rf = rf,
    ar = read_rate(v[3], a_legacy and a_legacy[1], bucket), at = read_rate(v[4], a_legacy and a_legacy[2], bucket),
    kr = read_rate(v[5], k_legacy and k_legacy[1], bucket), kt = read_rate(v[6], k_legacy and k_legacy[2], bucket),
  }
end

local function write_records(state, r)
  local rf = r.rf
  local fields = {
    'a', pack_record(r.a), r.kf, pack_record(r.k), rf[1], pack_record(r.ar), rf[2], pack_record(r.at),
    rf[3], pack_record(r.kr), rf[4], pack_record(r.kt),
  }
  if r.g then fields[#fields + 1], fields[#fields + 2] = r.gf, pack_record(r.g) end
  redis.call('HSET', state, unpack(fields))
end

-- Ends an open hold: its amount leaves `held`, its slot returns, its token estimate becomes
-- `actual_tokens` in the bucket it was counted in (while in view), and `charged` leaves the balance and
-- joins the key's (and guardrail's) spend of the current UTC day and month. A released free request gives
-- its place in the free allowance back (`refund`). Returns the available balance after.
local function end_hold(state, hold, actual_tokens, charged, now, refund)
  local r = read_records(state, hold.key, hold.guardrail, now)
  if not r then return 0 end
  local a, k, g = r.a, r.k, r.g
  adjust(r.at, hold.bucket, actual_tokens - hold.tokens)
  adjust(r.kt, hold.bucket, actual_tokens - hold.tokens)
  local day, month = calendar(now)
  if k[K_DW] ~= day then k[K_DW], k[K_DS] = day, 0 end
  if k[K_MW] ~= month then k[K_MW], k[K_MS] = month, 0 end
  a[A_BAL], a[A_HELD], a[A_CONC] = a[A_BAL] - charged, a[A_HELD] - hold.amount, a[A_CONC] - hold.slots
  k[K_HELD], k[K_CONC], k[K_DS], k[K_MS] = k[K_HELD] - hold.amount, k[K_CONC] - hold.slots, k[K_DS] + charged, k[K_MS] + charged
  if refund and hold.free and a[A_FD] == day then a[A_FC] = math.max(0, a[A_FC] - 1) end
  if g then
    if g[G_MW] ~= month then g[G_MW], g[G_MS] = month, 0 end
    g[G_HELD], g[G_MS] = g[G_HELD] - hold.amount, g[G_MS] + charged
  end
  write_records(state, r)
  return a[A_BAL] - a[A_HELD]
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
