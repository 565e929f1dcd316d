/**
 * `bun run bench:accounts`: a load test of many accounts on real PostgreSQL and Redis. Creates N
 * accounts with one funded key each through the operator API, drives mixed traffic (the three client
 * styles, streaming and not, keys picked at random across every account) with wrk for a duration,
 * and reads the gateway's memory, Redis's keys and memory, and PostgreSQL's rows before, during and
 * after the load. Once every lease and outbox entry has ended it checks the money of every account
 * (live balance equal to the ledger, none negative, no hold left) and whether anything kept growing
 * with the number of requests. Progress goes to stderr, the Markdown report to stdout (and to
 * --out FILE).
 */
import Redis from 'ioredis'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import postgres from 'postgres'
import { nanoToUsd, usdToNano } from '../shared/money.ts'
import { runMixedLoad, trafficKinds, type MixedResult } from './accounts-load.ts'
import { answeredTotal, takeReading, type Reading, type Sources } from './accounts-readings.ts'
import { gatewayLogProblems } from './checks.ts'
import { startGateway, type AccountState, type OperatorClient } from './gateway.ts'
import { describeMachine, gatewayRevision, machineBusy } from './machine.ts'
import { UsageError } from './options.ts'
import { cleanup, cleanUpOnSignals, runCommand, startService } from './processes.ts'
import { prepareStores } from './stores.ts'

const REPO_DIR = join(import.meta.dir, '..')
const MODEL = 'bench/fast'

const usage = `Usage: bun run bench:accounts [--accounts N] [--duration D] [--connections N] [--out FILE]

  --accounts N       accounts to create, each with one funded key (default 10000)
  --duration D       length of the load: 30s, 5m, or seconds (default 5m)
  --connections N    wrk's keep-alive connections (default 64)
  --credit-usd X     credit of each account (default 10)
  --every D          time between readings during the load (default: a fifth of the duration)
  --settle D         wait once every lease and outbox entry has ended, before the reading after the
                     load (default 15s)
  --rest D           then wait this long with no load for the last reading (default 60s), which
                     shows what the gateway does at rest with every account active lately
  --setup-concurrency N   operator API calls in flight while creating accounts and keys (default 32)
  --gateway-env NAME=VALUE  a gateway setting for this run (repeatable), e.g. ADMISSION_LEASE_MS=0
  --out FILE         also write the Markdown report to FILE

Needs DATABASE_URL and REDIS_URL. The gateway gets a fresh database (dropped at the end) and a unique
key prefix in a Redis database of its own (the first empty one of 1 to 15, unless REDIS_URL names one;
its keys are deleted at the end). WRK_PATH names the wrk binary (default /usr/bin/wrk, then PATH).`

type Options = {
  accounts: number
  durationS: number
  connections: number
  creditUsd: string
  everyS: number
  settleS: number
  restS: number
  setupConcurrency: number
  gatewayEnv: string[]
  out: string | undefined
}

function seconds(value: string, name: string): number {
  const match = /^(\d+)(s|m|h)?$/.exec(value.trim())
  if (!match || Number(match[1]) <= 0)
    throw new UsageError(`--${name} must be a duration such as 30s, 5m or 300`)
  return Number(match[1]) * ({ s: 1, m: 60, h: 3600 }[match[2] ?? 's'] ?? 1)
}

function whole(value: string | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback
  if (!/^\d+$/.test(value) || Number(value) < 1)
    throw new UsageError(`--${name} must be a whole number ≥ 1`)
  return Number(value)
}

function parseOptions(args: string[]): Options | undefined {
  const { values } = parseArgs({
    args,
    strict: true,
    options: {
      accounts: { type: 'string' },
      duration: { type: 'string' },
      connections: { type: 'string' },
      'credit-usd': { type: 'string' },
      every: { type: 'string' },
      settle: { type: 'string' },
      rest: { type: 'string' },
      'setup-concurrency': { type: 'string' },
      'gateway-env': { type: 'string', multiple: true },
      out: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  })
  if (values.help) return undefined
  const durationS = seconds(values.duration ?? '5m', 'duration')
  const creditUsd = values['credit-usd'] ?? '10'
  if (!usdToNano(creditUsd)) throw new UsageError('--credit-usd must be a positive amount of USD')
  const gatewayEnv = values['gateway-env'] ?? []
  for (const setting of gatewayEnv)
    if (!/^[A-Z][A-Z0-9_]*=/.test(setting))
      throw new UsageError(`--gateway-env takes NAME=VALUE, not ${setting}`)
  return {
    accounts: whole(values.accounts, 'accounts', 10_000),
    durationS,
    connections: whole(values.connections, 'connections', 64),
    creditUsd,
    everyS: values.every ? seconds(values.every, 'every') : Math.max(5, Math.round(durationS / 5)),
    settleS: values.settle ? seconds(values.settle, 'settle') : 15,
    restS: values.rest ? seconds(values.rest, 'rest') : 60,
    setupConcurrency: whole(values['setup-concurrency'], 'setup-concurrency', 32),
    gatewayEnv,
    out: values.out,
  }
}

const progress = (message: string) => process.stderr.write(`${message}\n`)

/** REDIS_URL with a database of the run's own: the one it names, else the first empty of 1–15. */
async function redisDatabase(redisUrl: string): Promise<{ url: string; db: number }> {
  const url = new URL(redisUrl)
  if (!/^rediss?:$/.test(url.protocol))
    throw new UsageError('REDIS_URL must name a single Redis server (redis:// or rediss://)')
  const named = url.pathname.replace(/^\//, '')
  if (named) return { url: redisUrl, db: Number(named) }
  for (let db = 1; db <= 15; db++) {
    const probe = new Redis(redisUrl, { db, lazyConnect: true, maxRetriesPerRequest: 1 })
    await probe.connect()
    const size = await probe.dbsize()
    probe.disconnect()
    if (size === 0) {
      url.pathname = `/${db}`
      return { url: url.toString(), db }
    }
  }
  throw new UsageError('no empty Redis database among 1–15: name one in REDIS_URL (redis://…/N)')
}

type Funded = { accountId: string; key: string }

/** Runs `task` for 0…count-1 with at most `concurrency` in flight; results in index order. */
async function inParallel<T>(
  count: number,
  concurrency: number,
  task: (index: number) => Promise<T>,
  onDone?: (done: number) => void,
): Promise<T[]> {
  const results = new Array<T>(count)
  let next = 0
  let done = 0
  const worker = async () => {
    while (next < count) {
      const index = next++
      results[index] = await task(index)
      onDone?.(++done)
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker))
  return results
}

/** Creates the accounts and their keys through the operator API. */
async function createAccounts(
  operator: OperatorClient,
  options: Options,
): Promise<{ funded: Funded[]; seconds: number }> {
  const started = performance.now()
  const step = Math.max(1, Math.round(options.accounts / 10))
  const funded = await inParallel(
    options.accounts,
    options.setupConcurrency,
    async () => {
      const accountId = await operator.createAccount(options.creditUsd)
      return { accountId, key: await operator.createKey(accountId) }
    },
    (done) => {
      if (done % step === 0 || done === options.accounts)
        progress(
          `  ${done} accounts and keys (${Math.round(done / ((performance.now() - started) / 1000))}/s)`,
        )
    },
  )
  return { funded, seconds: (performance.now() - started) / 1000 }
}

/** One request of each kind with one key: 200, and the cost in the answer. */
async function checkKinds(apiUrl: string, key: string): Promise<void> {
  for (const kind of trafficKinds(MODEL)) {
    const response = await fetch(`${apiUrl}${kind.path}`, {
      method: 'POST',
      headers: { ...kind.headers, authorization: `Bearer ${key}` },
      body: JSON.stringify(kind.body),
    })
    const text = await response.text()
    const what = `${kind.style}${kind.stream ? ', streaming' : ''}`
    if (response.status !== 200)
      throw new Error(`${what}: status ${response.status}: ${text.slice(0, 500)}`)
    if (!text.includes('"cost"'))
      throw new Error(`${what}: no cost in the answer: ${text.slice(-500)}`)
  }
}

/**
 * Polls until no lease and no outbox entry is left and the gateway has no hold open and nothing in
 * flight. Holds of single requests may stay: an admission Redis placed but did not confirm in time
 * (502 admission_unconfirmed) keeps its hold until its deadline, by design.
 */
async function waitForSettled(
  sources: Sources,
  timeoutS: number,
): Promise<{ waitedS: number; orphanAccounts: string[] }> {
  const started = Date.now()
  for (;;) {
    const reading = await takeReading(sources, 'settling', undefined)
    const open =
      reading.redis.leases +
      (reading.redis.byKind.outbox ?? 0) +
      reading.gateway.openHolds +
      reading.gateway.inflight
    const waitedS = (Date.now() - started) / 1000
    if (open === 0 || waitedS > timeoutS)
      return { waitedS, orphanAccounts: reading.redis.accountsWithRequestHolds }
    await Bun.sleep(500)
  }
}

type MoneyCheck = {
  accounts: number
  mismatched: { accountId: string; balanceNano: number; ledgerBalanceNano: number }[]
  negative: number
  /** Accounts with a hold or a request in flight left; of them, those with orphan holds only. */
  holdsLeft: number
  orphanHolds: number
  balanceNano: number
  ledger: {
    creditNano: number
    chargeNano: number
    writtenOffNano: number
    sumNano: number
    rows: Record<string, number>
  }
  logs: {
    rows: number
    byStatus: Record<string, number>
    byError: Record<string, number>
    chargedNano: number
    charged: number
  }
}

/** Every account through the operator API; the totals of the ledger and the request log in SQL. */
async function checkMoney(
  operator: OperatorClient,
  funded: Funded[],
  sql: postgres.Sql,
  orphanAccounts: Set<string>,
): Promise<MoneyCheck> {
  const states = await inParallel(funded.length, 16, async (index) => {
    const { accountId } = funded[index]!
    let state: AccountState = await operator.account(accountId)
    // A charge may still be on its way to Postgres: read again for a moment before calling it a
    // mismatch.
    const attempts = orphanAccounts.has(accountId) ? 1 : 20
    for (let attempt = 0; attempt < attempts; attempt++) {
      if (
        state.balanceNano === state.ledgerBalanceNano &&
        state.heldNano === 0 &&
        state.inFlight === 0
      )
        break
      await Bun.sleep(250)
      state = await operator.account(accountId)
    }
    return state
  })
  const [ledger] = await sql<
    { credit: number; charge: number; written_off: number; sum: number }[]
  >`SELECT coalesce(sum(amount_nano) FILTER (WHERE kind = 'credit'), 0)::bigint AS credit,
           coalesce(sum(amount_nano) FILTER (WHERE kind = 'charge'), 0)::bigint AS charge,
           coalesce(sum(written_off_nano), 0)::bigint AS written_off,
           coalesce(sum(amount_nano), 0)::bigint AS sum
    FROM ledger`
  const ledgerRows = await sql<{ kind: string; n: number }[]>`
    SELECT kind, count(*)::int AS n FROM ledger GROUP BY kind ORDER BY kind`
  const errors = await sql<{ code: string; n: number }[]>`
    SELECT error_code AS code, count(*)::int AS n FROM request_logs
    WHERE error_code IS NOT NULL GROUP BY error_code ORDER BY error_code`
  const logRows = await sql<{ status: number; n: number; charged: number; with_charge: number }[]>`
    SELECT status, count(*)::int AS n, coalesce(sum(charged_nano), 0)::bigint AS charged,
           (count(*) FILTER (WHERE charged_nano > 0))::int AS with_charge
    FROM request_logs GROUP BY status ORDER BY status`
  return {
    accounts: states.length,
    mismatched: states
      .filter((state) => state.balanceNano !== state.ledgerBalanceNano)
      .map(({ accountId, balanceNano, ledgerBalanceNano }) => ({
        accountId,
        balanceNano,
        ledgerBalanceNano,
      })),
    negative: states.filter((state) => state.balanceNano < 0).length,
    holdsLeft: states.filter((state) => state.heldNano !== 0 || state.inFlight !== 0).length,
    orphanHolds: states.filter(
      (state) =>
        (state.heldNano !== 0 || state.inFlight !== 0) && orphanAccounts.has(state.accountId),
    ).length,
    balanceNano: states.reduce((sum, state) => sum + state.balanceNano, 0),
    ledger: {
      creditNano: Number(ledger!.credit),
      chargeNano: Number(ledger!.charge),
      writtenOffNano: Number(ledger!.written_off),
      sumNano: Number(ledger!.sum),
      rows: Object.fromEntries(ledgerRows.map((row) => [row.kind, row.n])),
    },
    logs: {
      rows: logRows.reduce((sum, row) => sum + row.n, 0),
      byStatus: Object.fromEntries(logRows.map((row) => [String(row.status), row.n])),
      byError: Object.fromEntries(errors.map((row) => [row.code, row.n])),
      chargedNano: logRows.reduce((sum, row) => sum + Number(row.charged), 0),
      charged: logRows.reduce((sum, row) => sum + row.with_charge, 0),
    },
  }
}

const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1)
const int = (value: number) => Math.round(value).toLocaleString('en-US')
const signed = (value: number, digits = 0) =>
  `${value >= 0 ? '+' : '−'}${Math.abs(value).toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })}`

function kinds(reading: Reading): string {
  const order = [
    'state',
    'credits',
    'holds',
    'outbox',
    'admission',
    'address',
    'free-chat',
    'other',
  ]
  const rank = (name: string) => (order.includes(name) ? order.indexOf(name) : order.length)
  const names = Object.keys(reading.redis.byKind).sort((a, b) => rank(a) - rank(b))
  return names.map((name) => `${name} ${int(reading.redis.byKind[name]!)}`).join(', ') || 'none'
}

/** The run's Redis keys, and DBSIZE when its database holds others too. */
function redisCount(reading: Reading): string {
  const { total, dbsize } = reading.redis
  return dbsize === total ? int(total) : `${int(total)} (DBSIZE ${int(dbsize)})`
}

function readingsTable(readings: Reading[]): string {
  const rows = [
    '| Reading | At | Answered | Requests/s | Gateway RSS | JS heap | Gateway CPU | Machine busy | Redis keys | By kind | Redis used_memory | Ledger rows | Request-log rows | Stored responses |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: |',
  ]
  readings.forEach((reading, index) => {
    const previous = readings[index - 1]
    const seconds = previous ? (reading.atMs - previous.atMs) / 1000 : 0
    const rate =
      previous && seconds > 0
        ? int((answeredTotal(reading) - answeredTotal(previous)) / seconds)
        : ''
    const cpu =
      previous && seconds > 0
        ? `${Math.round(((reading.gateway.cpuS - previous.gateway.cpuS) / seconds) * 100)}%`
        : ''
    const busy =
      previous && reading.cpu.total > previous.cpu.total
        ? `${Math.round(((reading.cpu.busy - previous.cpu.busy) / (reading.cpu.total - previous.cpu.total)) * 100)}%`
        : ''
    rows.push(
      `| ${reading.label} | ${reading.atS.toFixed(0)} s | ${int(answeredTotal(reading))} | ${rate} | ${mb(reading.gateway.rssKb * 1024)} MB | ${mb(reading.gateway.heapUsedBytes)} MB | ${cpu} | ${busy} | ${redisCount(reading)} | ${kinds(reading)} | ${mb(reading.redis.usedMemory)} MB | ${int(reading.postgres.ledger)} | ${int(reading.postgres.requestLogs)} | ${int(reading.postgres.storedResponses)} |`,
    )
  })
  return rows.join('\n')
}

function answersTable(reading: Reading): string {
  const rows = ['| Style | Status | Answers |', '| --- | ---: | ---: |']
  for (const [key, count] of Object.entries(reading.answered).sort()) {
    const [style, status] = key.split(' ')
    rows.push(`| ${style} | ${status} | ${int(count)} |`)
  }
  return rows.join('\n')
}

type Report = {
  options: Options
  machine: Awaited<ReturnType<typeof describeMachine>>
  busyBefore: number | undefined
  revision: string
  stores: { database: string; admission: string }
  setup: { seconds: number }
  load: MixedResult
  readings: Reading[]
  settledAfterS: number
  money: MoneyCheck
  log: { lines: number; samples: string[] }
  startedAt: Date
}

function growth(report: Report): string[] {
  const { readings, options } = report
  const before = readings.find((reading) => reading.label === 'before')!
  const after = readings[readings.length - 1]!
  const during = readings.filter(
    (reading) => reading.label.startsWith('load') || reading.label === 'end of load',
  )
  const requests = answeredTotal(after) - answeredTotal(before)
  const lines: string[] = []
  const keyDelta = after.redis.total - before.redis.total
  lines.push(
    `- Redis keys of the run: ${int(before.redis.total)} before, ${int(after.redis.total)} ${after.label} (${signed(keyDelta)}; ${kinds(after)}), for ${int(options.accounts)} accounts and ${int(requests)} requests: ${(after.redis.total / options.accounts).toFixed(2)} keys per account, ${((keyDelta / Math.max(1, requests)) * 1e6).toFixed(1)} per million requests.`,
  )
  if (before.redis.bytes !== undefined && after.redis.bytes !== undefined)
    lines.push(
      `- Memory of those keys (MEMORY USAGE, summed): ${mb(before.redis.bytes)} MB before, ${mb(after.redis.bytes)} MB ${after.label}: ${int(after.redis.bytes / options.accounts)} bytes per account.`,
    )
  lines.push(
    `- Gateway resident memory: ${mb(before.gateway.rssKb * 1024)} MB before, ${mb(after.gateway.rssKb * 1024)} MB ${after.label} (${signed((after.gateway.rssKb - before.gateway.rssKb) / 1024, 1)} MB, ${((after.gateway.rssKb - before.gateway.rssKb) / options.accounts).toFixed(1)} KB per account; peak ${mb(after.gateway.peakRssKb * 1024)} MB); JS heap ${mb(before.gateway.heapUsedBytes)} MB before, ${mb(after.gateway.heapUsedBytes)} MB ${after.label}.`,
  )
  if (during.length >= 2) {
    const first = during[0]!
    const last = during[during.length - 1]!
    const served = answeredTotal(last) - answeredTotal(first)
    if (served > 0)
      lines.push(
        `- During the load, from the first reading (${first.atS.toFixed(0)} s) to the last (${last.atS.toFixed(0)} s), ${int(served)} requests: resident memory ${signed((last.gateway.rssKb - first.gateway.rssKb) / 1024, 1)} MB, JS heap ${signed((last.gateway.heapUsedBytes - first.gateway.heapUsedBytes) / 1024 / 1024, 1)} MB, Redis keys ${signed(last.redis.total - first.redis.total)}.`,
      )
  }
  const unknown = after.redis.unknown
  if (unknown.length > 0) lines.push(`- Keys of no known kind, for example: ${unknown.join(', ')}.`)
  return lines
}

const listed = (counts: Record<string, number>, separator = ' ') =>
  Object.entries(counts)
    .map(([name, count]) => `${name}${separator}${int(count)}`)
    .join(', ')

function moneyLines(report: Report): string[] {
  const { money, options } = report
  const credited = usdToNano(options.creditUsd)! * options.accounts
  const equal = money.mismatched.length === 0
  const orphans =
    money.holdsLeft > 0
      ? ` (${money.orphanHolds} of them only with the holds of admissions Redis placed but did not confirm in time: 502 admission_unconfirmed, nothing sent or charged; such a hold ends at its deadline)`
      : ''
  const lines = [
    `- ${int(money.accounts)} accounts read through the operator API once every lease and outbox entry had ended (${report.settledAfterS.toFixed(1)} s after the load): balance equal to the ledger sum for ${int(money.accounts - money.mismatched.length)}: ${equal ? '**every one**' : `**${money.mismatched.length} differ**`}; negative balances: ${money.negative}; accounts with a hold or a request in flight left: ${money.holdsLeft}${orphans}.`,
  ]
  for (const mismatch of money.mismatched.slice(0, 5))
    lines.push(
      `  - ${mismatch.accountId}: balance ${mismatch.balanceNano} nano, ledger ${mismatch.ledgerBalanceNano} nano`,
    )
  const sameSum = money.ledger.sumNano === money.balanceNano
  const sameCharges =
    money.logs.chargedNano === -money.ledger.chargeNano &&
    money.logs.charged === (money.ledger.rows.charge ?? 0)
  const errors = Object.keys(money.logs.byError).length
    ? `; errors: ${listed(money.logs.byError)}`
    : ''
  lines.push(
    `- Ledger: credits $${nanoToUsd(money.ledger.creditNano)} (expected $${nanoToUsd(credited)}), charges $${nanoToUsd(-money.ledger.chargeNano)}, written off $${nanoToUsd(money.ledger.writtenOffNano)}; sum $${nanoToUsd(money.ledger.sumNano)} against $${nanoToUsd(money.balanceNano)} of live balances: ${sameSum ? 'equal' : '**different**'}.`,
    `- Ledger rows by kind: ${listed(money.ledger.rows)}. Request log: ${int(money.logs.rows)} rows (${listed(money.logs.byStatus, ': ')}${errors}), ${int(money.logs.charged)} with a charge, $${nanoToUsd(money.logs.chargedNano)} charged in all: ${sameCharges ? 'the same charges as the ledger' : '**not the ledger’s charges**'}.`,
  )
  return lines
}

function renderReport(report: Report): string {
  const { options, machine, load, readings } = report
  const last = readings[readings.length - 1]!
  const errors = load.errors.connect + load.errors.read + load.errors.write + load.errors.timeout
  const busy =
    report.busyBefore === undefined
      ? ''
      : `; ${Math.round(report.busyBefore * 100)}% busy just before the run`
  return [
    `### ${int(options.accounts)} accounts, ${options.durationS} s of mixed traffic`,
    '',
    `- Machine: ${machine.cpu}, ${machine.cores} cores, ${machine.memoryGb} GB RAM, ${machine.kernel}${busy}`,
    `- Bun ${machine.bun}; gateway ${report.revision}; one process${options.gatewayEnv.length > 0 ? ` with ${options.gatewayEnv.join(', ')}` : ''}; ${report.stores.database}; ${report.stores.admission}`,
    `- Setup: ${int(options.accounts)} accounts with $${options.creditUsd} of credit and one key each, through the operator API (${options.setupConcurrency} calls in flight), in ${report.setup.seconds.toFixed(1)} s (${int(options.accounts / report.setup.seconds)} accounts and keys a second)`,
    `- Load: wrk, one thread, ${options.connections} keep-alive connections, ${options.durationS} s; every request one of six kinds at random (Chat Completions, Responses, Messages; streaming or not) with one of the ${int(options.accounts)} keys at random; zero-delay upstream; run started ${report.startedAt.toISOString()}`,
    '',
    '#### Readings',
    '',
    readingsTable(readings),
    '',
    'Answered, Requests/s and the gateway’s CPU (of one core) count from the previous reading; Redis keys are those of the run’s prefix, in a database of its own (equal to its DBSIZE unless noted); used_memory is the whole Redis server’s.',
    '',
    '#### Requests',
    '',
    `- wrk: ${int(load.requests)} requests in ${load.durationS.toFixed(1)} s, **${int(load.rps)} requests/s**; latency p50 ${(load.p50Us / 1000).toFixed(2)} ms, p99 ${(load.p99Us / 1000).toFixed(2)} ms; wrk used ${Math.round((load.cpuS / load.durationS) * 100)}% of a core (${((load.cpuS / Math.max(1, load.requests)) * 1e6).toFixed(0)} µs a request); ${int(load.non2xx)} answers not 2xx; socket errors: ${errors === 0 ? 'none' : `connect ${load.errors.connect}, read ${load.errors.read}, write ${load.errors.write}, timeout ${load.errors.timeout}`}.`,
    '- The gateway’s answers since it started (its /metrics; the setup’s six probe requests included):',
    '',
    answersTable(last),
    '',
    '#### Money',
    '',
    ...moneyLines(report),
    '',
    '#### Growth',
    '',
    ...growth(report),
    '',
    '#### Gateway log',
    '',
    report.log.lines === 0
      ? '- No warnings or errors.'
      : `- ${report.log.lines} lines: ${report.log.samples.join('; ')}`,
    '',
  ].join('\n')
}

type Tools = { databaseUrl: string; redisUrl: string; wrk: string }

/** The stores and wrk the run needs, or a usage error naming what is missing. */
async function tools(): Promise<Tools> {
  const databaseUrl = process.env.DATABASE_URL
  const redisUrl = process.env.REDIS_URL
  if (!databaseUrl || !redisUrl)
    throw new UsageError(
      'bench:accounts needs DATABASE_URL and REDIS_URL (real PostgreSQL and Redis)',
    )
  const wrk =
    process.env.WRK_PATH ??
    ((await Bun.file('/usr/bin/wrk').exists()) ? '/usr/bin/wrk' : Bun.which('wrk'))
  if (!wrk) throw new UsageError('wrk not found: install it (apt-get install wrk) or set WRK_PATH')
  return { databaseUrl, redisUrl, wrk }
}

async function run(
  options: Options,
  { databaseUrl, redisUrl, wrk }: Tools,
  scratchDir: string,
): Promise<{ markdown: string; passed: boolean }> {
  const startedAt = new Date()
  const runId = String(startedAt.getTime())
  const machine = await describeMachine()
  const busyBefore = await machineBusy()
  if (busyBefore !== undefined && busyBefore > 0.1)
    progress(
      `warning: the machine is ${Math.round(busyBefore * 100)}% busy before the run; results will be noisy`,
    )
  const redisDb = await redisDatabase(redisUrl)
  const stores = await prepareStores(databaseUrl, redisDb.url, runId)
  const redisPrefix = stores.env.REDIS_KEY_PREFIX!
  const admission = `${stores.admission.replace(/\)$/, '')}, database ${redisDb.db})`
  progress(`stores: ${stores.database}; ${admission}`)

  const { origin: upstream } = await startService(
    'fake-upstream',
    'fake-upstream.ts',
    [],
    scratchDir,
  )
  const gateway = await startGateway({
    repoDir: REPO_DIR,
    scratchDir,
    upstreamOrigin: upstream,
    storeEnv: stores.env,
    workers: 1,
    env: Object.fromEntries(
      options.gatewayEnv.map((setting) => [
        setting.slice(0, setting.indexOf('=')),
        setting.slice(setting.indexOf('=') + 1),
      ]),
    ),
  })
  progress(`gateway ${gateway.apiUrl} (site ${gateway.siteUrl}), pid ${gateway.pid}`)

  const redis = new Redis(redisDb.url, { lazyConnect: true, maxRetriesPerRequest: 1 })
  await redis.connect()
  const sql = postgres(stores.env.DATABASE_URL!, { max: 2, onnotice: () => {} })
  cleanup.add('close the readers', async () => {
    redis.disconnect()
    await sql.end({ timeout: 5 })
  })
  const sources: Sources = {
    gatewayPid: gateway.pid,
    siteUrl: gateway.siteUrl,
    redis,
    redisPrefix,
    sql,
  }

  progress(`creating ${options.accounts} accounts and keys…`)
  const setup = await createAccounts(gateway.operator, options)
  const keysFile = join(scratchDir, 'keys.txt')
  await Bun.write(keysFile, `${setup.funded.map((entry) => entry.key).join('\n')}\n`)
  await checkKinds(gateway.apiUrl, setup.funded[0]!.key)
  progress('one request of each kind: answered, with its cost')
  await Bun.sleep(2_000)

  const readings: Reading[] = [await takeReading(sources, 'before', undefined, true)]
  const report = (reading: Reading) =>
    progress(
      `${reading.label.padEnd(13)} ${reading.atS.toFixed(0).padStart(4)} s: answered ${answeredTotal(reading)}, RSS ${mb(reading.gateway.rssKb * 1024)} MB, heap ${mb(reading.gateway.heapUsedBytes)} MB, Redis keys ${reading.redis.total} (${kinds(reading)}), ledger ${reading.postgres.ledger}, logs ${reading.postgres.requestLogs}`,
    )
  report(readings[0]!)

  progress(`load: ${options.connections} connections for ${options.durationS} s…`)
  const loadStarted = Date.now()
  let loadDone = false
  const load = runMixedLoad({
    wrk,
    scriptPath: join(scratchDir, 'accounts.lua'),
    keysFile,
    origin: gateway.apiUrl,
    model: MODEL,
    connections: options.connections,
    durationS: options.durationS,
    seed: loadStarted % 1_000_000,
  }).finally(() => {
    loadDone = true
  })
  for (let at = options.everyS; at < options.durationS - 2; at += options.everyS) {
    await Promise.race([load, Bun.sleep(loadStarted + at * 1000 - Date.now())])
    if (loadDone) break
    const reading = await takeReading(sources, `load ${at} s`, loadStarted)
    readings.push(reading)
    report(reading)
  }
  const result = await load
  readings.push(await takeReading(sources, 'end of load', loadStarted))
  report(readings[readings.length - 1]!)
  progress(`wrk: ${Math.round(result.rps)} requests/s, ${result.non2xx} not 2xx`)

  const settled = await waitForSettled(sources, 120)
  const settledAfterS = settled.waitedS
  progress(
    `every lease and outbox entry ended ${settledAfterS.toFixed(1)} s after the load (holds of unconfirmed admissions left in ${settled.orphanAccounts.length} accounts); waiting ${options.settleS} s`,
  )
  await Bun.sleep(options.settleS * 1000)
  readings.push(await takeReading(sources, 'after settle', loadStarted, true))
  report(readings[readings.length - 1]!)
  await Bun.sleep(options.restS * 1000)
  readings.push(await takeReading(sources, 'at rest', loadStarted, true))
  report(readings[readings.length - 1]!)

  progress(`checking the money of ${options.accounts} accounts…`)
  const money = await checkMoney(
    gateway.operator,
    setup.funded,
    sql,
    new Set(settled.orphanAccounts),
  )
  progress(
    `money: ${money.mismatched.length} mismatched, ${money.negative} negative, ${money.holdsLeft} with holds left`,
  )
  const markdown = renderReport({
    options,
    machine,
    busyBefore,
    revision: await gatewayRevision(REPO_DIR),
    stores: { database: stores.database, admission },
    setup,
    load: result,
    readings,
    settledAfterS,
    money,
    log: await gatewayLogProblems(gateway.logFile),
    startedAt,
  })
  const passed =
    money.mismatched.length === 0 &&
    money.negative === 0 &&
    money.holdsLeft === money.orphanHolds &&
    money.ledger.sumNano === money.balanceNano
  return { markdown, passed }
}

async function main(): Promise<number> {
  const options = parseOptions(Bun.argv.slice(2))
  if (!options) {
    console.log(usage)
    return 0
  }
  const needed = await tools()
  cleanUpOnSignals()
  const scratchDir = await mkdtemp(join(tmpdir(), 'gateway-bench-accounts-'))
  let ok = false
  cleanup.add('remove scratch directory', async () => {
    if (ok) await rm(scratchDir, { recursive: true, force: true })
    else progress(`logs kept in ${scratchDir}`)
  })
  try {
    const { markdown, passed } = await run(options, needed, scratchDir)
    console.log(markdown)
    if (options.out) {
      await Bun.write(options.out, markdown)
      progress(`report written to ${options.out}`)
    }
    // The gateway's log stays for a look when the money does not add up.
    ok = passed
    if (!passed) progress('the money check failed (see the report)')
    return passed ? 0 : 1
  } finally {
    await cleanup.run()
  }
}

runCommand(main, usage)
