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
import postgres from 'postgres'
import { runMixedLoad, trafficKinds } from './accounts-load.ts'
import { answeredTotal, takeReading, type Reading, type Sources } from './accounts-readings.ts'
import { gatewayLogProblems } from './checks.ts'
import { startGateway, type OperatorClient } from './gateway.ts'
import { describeMachine, gatewayRevision, machineBusy } from './machine.ts'
import { UsageError } from './options.ts'
import { checkMoney, inParallel, waitForSettled, type Funded } from './accounts-money.ts'
import { parseOptions, usage, type Options } from './accounts-options.ts'
import { kinds, mb, renderReport } from './accounts-report.ts'
import { cleanup, cleanUpOnSignals, runCommand, startService } from './processes.ts'
import { prepareStores } from './stores.ts'

const REPO_DIR = join(import.meta.dir, '..')
const MODEL = 'bench/fast'

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
    log: await gatewayLogProblems(gateway.logFile, gateway.startupLogBytes),
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
