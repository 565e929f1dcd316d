--[[
  admit: the one atomic admission decision of a request. Checks, in order, the key's and then the
  account's concurrency, requests per minute and tokens per minute, the key's daily and monthly spend
  caps (open holds count), and the available balance (balance minus open holds) against the hold.
  When everything passes, places the hold and counts the request.

  admit(state, holds, args, at, now): args[at..at+15] are
    request id, key id, hold (nano-USD), token estimate,
    key rpm, key tpm, key concurrency, key daily cap (nano), key monthly cap (nano),
    account rpm, account tpm, account concurrency, hold deadline (ms from now)   (every limit: 0 means none),
    guardrail id ('' for none), guardrail monthly budget (nano, 0: none),
    free allowance per UTC day (-1: not a free request)

  Returns one of
    {'ok', availableAfterNano, nowMs}
    {'cold'}                                       the account's state is not loaded: seed it, then retry
    {'duplicate'}                                  the request id already has an open hold
    {'rate', limitName, limit, retryAfterMs, availableNano}
        limitName: key_concurrency key_rpm key_tpm account_concurrency account_rpm account_tpm
    {'spend', 'daily'|'monthly'|'guardrail', capNano, resetAtMs, availableNano}
    {'free', allowance, retryAfterMs, availableNano}   the account's free allowance for the day is used up
    {'credits', availableNano}
]]

local function admit(state, holds, args, at, now)
  local request_id, key_id = args[at], args[at + 1]
  local hold, tokens = tonumber(args[at + 2]), tonumber(args[at + 3])
  local key_rpm, key_tpm, key_conc = tonumber(args[at + 4]), tonumber(args[at + 5]), tonumber(args[at + 6])
  local key_daily, key_monthly = tonumber(args[at + 7]), tonumber(args[at + 8])
  local acct_rpm, acct_tpm, acct_conc = tonumber(args[at + 9]), tonumber(args[at + 10]), tonumber(args[at + 11])
  local deadline_ms = tonumber(args[at + 12])
  local guardrail, guardrail_budget, free_allowance = args[at + 13], tonumber(args[at + 14]), tonumber(args[at + 15])

  local r = read_records(state, key_id, guardrail, now)
  if not r then return { 'cold' } end
  if redis.call('HEXISTS', holds, request_id) == 1 then return { 'duplicate' } end
  local a, k, g = r.a, r.k, r.g
  local avail = a[A_BAL] - a[A_HELD]

  -- Requests or tokens per minute (a rate record) against a limit.
  local function over(name, limit, rate, cost)
    if limit > 0 and rate_count(rate) + cost > limit then
      return { 'rate', name, limit, rate_retry_ms(rate, now, limit, cost), avail }
    end
  end

  -- A concurrency slot frees when a request ends; a second is a fair first wait.
  if key_conc > 0 and k[K_CONC] >= key_conc then return { 'rate', 'key_concurrency', key_conc, 1000, avail } end
  local refused = over('key_rpm', key_rpm, r.kr, 1) or over('key_tpm', key_tpm, r.kt, tokens)
  if refused then return refused end
  if acct_conc > 0 and a[A_CONC] >= acct_conc then return { 'rate', 'account_concurrency', acct_conc, 1000, avail } end
  refused = over('account_rpm', acct_rpm, r.ar, 1) or over('account_tpm', acct_tpm, r.at, tokens)
  if refused then return refused end

  local day, month, day_end, month_end = calendar(now)
  if k[K_DW] ~= day then k[K_DW], k[K_DS] = day, 0 end
  if k[K_MW] ~= month then k[K_MW], k[K_MS] = month, 0 end
  if key_daily > 0 and k[K_DS] + k[K_HELD] + hold > key_daily then return { 'spend', 'daily', key_daily, day_end, avail } end
  if key_monthly > 0 and k[K_MS] + k[K_HELD] + hold > key_monthly then return { 'spend', 'monthly', key_monthly, month_end, avail } end
  if g then
    if g[G_MW] ~= month then g[G_MW], g[G_MS] = month, 0 end
    if guardrail_budget > 0 and g[G_MS] + g[G_HELD] + hold > guardrail_budget then return { 'spend', 'guardrail', guardrail_budget, month_end, avail } end
  end
  if free_allowance >= 0 then
    if a[A_FD] ~= day then a[A_FD], a[A_FC] = day, 0 end
    if a[A_FC] >= free_allowance then return { 'free', free_allowance, day_end - now, avail } end
    a[A_FC] = a[A_FC] + 1
  end

  if avail < hold then return { 'credits', avail } end

  a[A_HELD], a[A_CONC] = a[A_HELD] + hold, a[A_CONC] + 1
  k[K_HELD], k[K_CONC] = k[K_HELD] + hold, k[K_CONC] + 1
  r.ar[2], r.kr[2], r.at[2], r.kt[2] = r.ar[2] + 1, r.kr[2] + 1, r.at[2] + tokens, r.kt[2] + tokens
  if g then g[G_HELD] = g[G_HELD] + hold end
  write_records(state, r)
  local entry = { key = key_id, amount = hold, tokens = tokens, bucket = math.floor(now / BUCKET_MS), deadline = now + deadline_ms, guardrail = guardrail, free = free_allowance >= 0 }
  redis.call('HSET', holds, request_id, hold_value(entry))
  return { 'ok', avail - hold, now }
end
