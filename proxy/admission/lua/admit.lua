--[[
  admit: the one atomic admission decision of a request. Checks, in order, the key's and then the
  account's concurrency, requests per minute and tokens per minute, the key's daily and monthly spend
  caps (open holds count), and the available balance (balance minus open holds) against the hold.
  When everything passes, places the hold and counts the request.

  KEYS[1] state   KEYS[2] holds   KEYS[3] due
  ARGV[1] request id      ARGV[2] key id         ARGV[3] hold (nano-USD)   ARGV[4] token estimate
  ARGV[5] key rpm         ARGV[6] key tpm        ARGV[7] key concurrency
  ARGV[8] key daily cap (nano)                    ARGV[9] key monthly cap (nano)
  ARGV[10] account rpm    ARGV[11] account tpm   ARGV[12] account concurrency
  ARGV[13] hold deadline (ms from now)            (every limit: 0 means none)

  Returns one of
    {'ok', availableAfterNano, nowMs}
    {'cold'}                                       the account's state is not loaded: seed it, then retry
    {'duplicate'}                                  the request id already has a hold
    {'rate', limitName, limit, retryAfterMs, availableNano}
        limitName: key_concurrency key_rpm key_tpm account_concurrency account_rpm account_tpm
    {'spend', 'daily'|'monthly', capNano, resetAtMs, availableNano}
    {'credits', availableNano}
]]

local state, holds, due = KEYS[1], KEYS[2], KEYS[3]
local request_id, key_id = ARGV[1], ARGV[2]
local hold, tokens = tonumber(ARGV[3]), tonumber(ARGV[4])
local key_rpm, key_tpm, key_conc = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
local key_daily, key_monthly = tonumber(ARGV[8]), tonumber(ARGV[9])
local acct_rpm, acct_tpm, acct_conc = tonumber(ARGV[10]), tonumber(ARGV[11]), tonumber(ARGV[12])
local deadline_ms = tonumber(ARGV[13])

if redis.call('HEXISTS', state, 'bal') == 0 then return { 'cold' } end
if redis.call('HEXISTS', holds, request_id) == 1 then return { 'duplicate' } end

local now = now_ms()
local window = math.floor(now / WINDOW_MS)
local k = key_id .. ':'
local avail = available(state)

local v = redis.call('HMGET', state, 'conc', k .. 'conc', k .. 'held', k .. 'dw', k .. 'ds', k .. 'mw', k .. 'ms')
local acct_inflight, key_inflight, key_held = num(v[1]), num(v[2]), num(v[3])

local key_requests, key_tokens = read_rate(state, k)
local acct_requests, acct_tokens = read_rate(state, 'a')
roll(key_requests, window) roll(key_tokens, window) roll(acct_requests, window) roll(acct_tokens, window)

local function over(name, limit, counter, cost)
  if limit > 0 and rate_estimate(counter, now) + cost > limit then
    return { 'rate', name, limit, rate_retry_ms(counter, now, limit, cost), avail }
  end
end

-- A concurrency slot frees when a request ends; a second is a fair first wait.
if key_conc > 0 and key_inflight >= key_conc then return { 'rate', 'key_concurrency', key_conc, 1000, avail } end
local refused = over('key_rpm', key_rpm, key_requests, 1) or over('key_tpm', key_tpm, key_tokens, tokens)
if refused then return refused end
if acct_conc > 0 and acct_inflight >= acct_conc then return { 'rate', 'account_concurrency', acct_conc, 1000, avail } end
refused = over('account_rpm', acct_rpm, acct_requests, 1) or over('account_tpm', acct_tpm, acct_tokens, tokens)
if refused then return refused end

local day, month, day_end, month_end = calendar(now)
local day_spent = num(v[4]) == day and num(v[5]) or 0
local month_spent = num(v[6]) == month and num(v[7]) or 0
if key_daily > 0 and day_spent + key_held + hold > key_daily then return { 'spend', 'daily', key_daily, day_end, avail } end
if key_monthly > 0 and month_spent + key_held + hold > key_monthly then return { 'spend', 'monthly', key_monthly, month_end, avail } end

if avail < hold then return { 'credits', avail } end

key_requests.c = key_requests.c + 1
key_tokens.c = key_tokens.c + tokens
acct_requests.c = acct_requests.c + 1
acct_tokens.c = acct_tokens.c + tokens
write_rate(state, k, key_requests, key_tokens)
write_rate(state, 'a', acct_requests, acct_tokens)
redis.call('HINCRBY', state, 'held', hold)
redis.call('HINCRBY', state, 'conc', 1)
redis.call('HINCRBY', state, k .. 'held', hold)
redis.call('HINCRBY', state, k .. 'conc', 1)
redis.call('HSET', state, k .. 'dw', day, k .. 'ds', day_spent, k .. 'mw', month, k .. 'ms', month_spent)
redis.call('HSET', holds, request_id, key_id .. '|' .. hold .. '|' .. tokens .. '|' .. window .. '|' .. now)
redis.call('ZADD', due, now + deadline_ms, request_id)
return { 'ok', avail - hold, now }
