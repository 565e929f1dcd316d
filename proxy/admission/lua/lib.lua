--[[
  Shared prelude of the admission scripts; the loader puts it in front of each script.

  One account's hot state lives in four keys with the account's hash tag, so every script touches one
  cluster slot:
    state   HASH  bal, held, conc, account rate window (arw arc arp atc atp),
                  and per key K: K:held K:conc, rate window K:rw K:rc K:rp K:tc K:tp,
                  spend windows K:dw K:ds (UTC day) and K:mw K:ms (UTC month)
    holds   HASH  request id -> open hold "keyId|holdNano|tokens|window|admittedMs",
                  or a tombstone "S|chargedNano|writtenOffNano" (settled), "R" (released), "E" (expired)
    due     ZSET  request id -> deadline of an open hold, or purge time of a tombstone
    outbox  HASH  request id -> ledger entry "keyId|chargedNano|writtenOffNano|atMs", until Postgres has it
  Money is integer nano-USD; amounts stay below 2^53 so Lua numbers hold them exactly.
]]

local WINDOW_MS = 60000
local DAY_MS = 86400000
local TOMBSTONE_MS = 900000

local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

local function num(value)
  return tonumber(value) or 0
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

-- A sliding-window counter: the previous minute's count weighted by the part of it still in view,
-- plus the current minute's. `f` is a table {window, current, previous} rolled to `window`.
local function roll(f, window)
  if f.w == window then return end
  if f.w == window - 1 then f.p = f.c else f.p = 0 end
  f.c = 0
  f.w = window
end

local function rate_estimate(f, now)
  local elapsed = now - f.w * WINDOW_MS
  return f.p * (WINDOW_MS - elapsed) / WINDOW_MS + f.c
end

-- Milliseconds until `cost` more fits under `limit`.
local function rate_retry_ms(f, now, limit, cost)
  local elapsed = now - f.w * WINDOW_MS
  local wait
  if cost > limit then
    wait = WINDOW_MS
  elseif f.c + cost <= limit then
    wait = (WINDOW_MS - elapsed) - WINDOW_MS * (limit - f.c - cost) / f.p
  else
    wait = (WINDOW_MS - elapsed) + WINDOW_MS * (1 - (limit - cost) / f.c)
  end
  return math.max(1000, math.min(2 * WINDOW_MS, math.ceil(wait)))
end

local function read_rate(state, prefix)
  local v = redis.call('HMGET', state, prefix .. 'rw', prefix .. 'rc', prefix .. 'rp', prefix .. 'tc', prefix .. 'tp')
  return { w = num(v[1]), c = num(v[2]), p = num(v[3]) }, { w = num(v[1]), c = num(v[4]), p = num(v[5]) }
end

local function write_rate(state, prefix, requests, tokens)
  redis.call('HSET', state, prefix .. 'rw', requests.w, prefix .. 'rc', requests.c, prefix .. 'rp', requests.p,
    prefix .. 'tc', tokens.c, prefix .. 'tp', tokens.p)
end

-- Moves a hold's token estimate to the actual count, in whichever minute it was counted.
local function correct_tokens(state, prefix, hold_window, delta, now)
  if delta == 0 then return end
  local requests, tokens = read_rate(state, prefix)
  roll(requests, math.floor(now / WINDOW_MS))
  roll(tokens, math.floor(now / WINDOW_MS))
  if hold_window == tokens.w then
    tokens.c = math.max(0, tokens.c + delta)
  elseif hold_window == tokens.w - 1 then
    tokens.p = math.max(0, tokens.p + delta)
  end
  write_rate(state, prefix, requests, tokens)
end

local function parse_hold(value)
  local key_id, amount, tokens, window, admitted = string.match(value, '^([^|]+)|(%d+)|(%d+)|(-?%d+)|(%d+)$')
  if not key_id then return nil end
  return { key = key_id, amount = tonumber(amount), tokens = tonumber(tokens), window = tonumber(window), admitted = tonumber(admitted) }
end

-- Ends an open hold: its amount leaves `held`, its concurrency slot returns, its token estimate is corrected.
-- (Amounts are negated as `0 - x`: Lua's `-x` of 0 is -0, which Redis formats as "-0" and HINCRBY refuses.)
local function end_hold(state, hold, actual_tokens, now)
  local k = hold.key .. ':'
  redis.call('HINCRBY', state, 'held', 0 - hold.amount)
  redis.call('HINCRBY', state, 'conc', -1)
  redis.call('HINCRBY', state, k .. 'held', 0 - hold.amount)
  redis.call('HINCRBY', state, k .. 'conc', -1)
  correct_tokens(state, 'a', hold.window, actual_tokens - hold.tokens, now)
  correct_tokens(state, k, hold.window, actual_tokens - hold.tokens, now)
end

local function available(state)
  local v = redis.call('HMGET', state, 'bal', 'held')
  return num(v[1]) - num(v[2])
end

-- What a request's hold entry says when it is not open: settled, released, expired, or unknown.
local function closed_status(value)
  if not value then return 'missing' end
  if string.sub(value, 1, 2) == 'S|' then return 'settled' end
  if value == 'R' then return 'released' end
  if value == 'E' then return 'expired' end
  return nil
end
