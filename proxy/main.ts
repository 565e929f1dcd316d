/**
 * `bun run start`: validates the configuration, migrates the database and serves the API server and the
 * site server, printing both URLs. With WORKERS above 1 it also starts that many minus one processes
 * serving only the API server on the same port (reusePort), each with its own store connections.
 * On SIGINT/SIGTERM it drains: /readyz answers 503, the listeners close, open requests get
 * SHUTDOWN_DRAIN_MS to finish before they are cut and settled, then queued ledger rows are written and
 * the stores closed (within STOP_WRITES_MS, or it exits anyway). Workers get SIGTERM from the first
 * process and drain the same way; a worker that exits by itself is logged and started again
 * (ops/workers.ts).
 *
 * Bun's fetch keeps at most BUN_CONFIG_MAX_HTTP_REQUESTS requests in flight per process (256 unless the
 * environment sets it, read once when the process starts); past it, provider requests would queue behind
 * long streams, whatever the gateway's own ceiling says. `bun run start` sets it; a process started
 * without it starts itself again with it and passes signals and its exit status through. A process
 * started by another one (that restart, or a worker) drains and exits when its parent goes away, even
 * when the parent was killed with SIGKILL.
 */
import { createApp } from './app.ts'
import { CatalogError } from './core/catalog/catalog.ts'
import { ConfigError, loadConfig } from './core/config.ts'
import { log, setLogLevel } from './core/log.ts'
import { MigrationError } from '../sql/migrate.ts'
import { ensurePortFree } from './ops/ports.ts'
import { reportWorkerMetrics, sumWorkerMetrics } from './ops/worker-metrics.ts'
import { Workers } from './ops/workers.ts'

/** The most Bun accepts: the gateway's ceiling (MAX_CONCURRENT_REQUESTS) is the limit that applies. */
const FETCH_LIMIT = '65535'
/** Marks a process started by another gateway process. */
const CHILD_FLAG = '--child'
/** After the drain, how long writing what is queued and closing the stores may take before the process exits anyway. */
const STOP_WRITES_MS = 20_000

async function main(): Promise<void> {
  const config = loadConfig()
  setLogLevel(config.LOG_LEVEL)
  const fetchLimit = Number(process.env.BUN_CONFIG_MAX_HTTP_REQUESTS)
  if (fetchLimit < config.MAX_CONCURRENT_REQUESTS) {
    log.warn(
      'BUN_CONFIG_MAX_HTTP_REQUESTS is below MAX_CONCURRENT_REQUESTS: provider requests past it wait for a free slot',
      {
        fetchLimit,
        ceiling: config.MAX_CONCURRENT_REQUESTS,
      },
    )
  }
  if (config.WORKERS > 1 && (!config.REDIS_URL || !config.DATABASE_URL)) {
    throw new ConfigError(
      'WORKERS above 1 needs REDIS_URL and DATABASE_URL: the embedded stores belong to one process.',
    )
  }
  const apiOnly = process.argv.includes('--api-only')
  if (process.argv.includes(CHILD_FLAG)) followParent()
  if (!apiOnly) {
    ensurePortFree(config.HOST, config.PORT, 'PORT')
    ensurePortFree(config.HOST, config.SITE_PORT, 'SITE_PORT')
  }
  const app = await createApp(config)
  const { apiUrl, siteUrl } = app.listen({ apiOnly })
  if (apiOnly) reportWorkerMetrics()
  let stopping = false
  const workers =
    !apiOnly && config.WORKERS > 1 ? startWorkers(config.WORKERS, app.api.server!.port!) : undefined
  if (!apiOnly) {
    log.info(
      `API server:  ${apiUrl}  (clients use ${apiUrl}/v1)${config.WORKERS > 1 ? ` on ${config.WORKERS} processes` : ''}`,
      { url: apiUrl },
    )
    log.info(`Site server: ${siteUrl}  (dashboard, operator API)`, { url: siteUrl })
  }
  const stop = async (signal: string) => {
    if (stopping) return
    stopping = true
    log.info(`${signal}: draining`, {
      drainMs: config.SHUTDOWN_DRAIN_MS,
      workers: workers?.running.length ?? 0,
    })
    // Writing what is queued needs Postgres; one that does not answer must not keep the process alive
    // (charges wait in Redis's outbox for another process's recovery).
    setTimeout(() => {
      log.error('stop did not finish; exiting with what is queued unwritten', {
        pending: app.gateway.writer.pending,
      })
      process.exit(1)
    }, config.SHUTDOWN_DRAIN_MS + STOP_WRITES_MS).unref()
    try {
      await Promise.all([app.stop({ drainMs: config.SHUTDOWN_DRAIN_MS }), workers?.stop()])
    } catch (error) {
      log.error('stop failed', { error })
      process.exit(1)
    }
    log.info('stopped')
    process.exit(0)
  }
  process.on('SIGINT', () => void stop('SIGINT'))
  process.on('SIGTERM', () => void stop('SIGTERM'))
}

/** The WORKERS − 1 API-server processes beside this one, on the port this one bound (PORT=0 picks one). */
function startWorkers(configured: number, port: number): Workers {
  const workers: Workers = new Workers(
    {
      argv: [process.execPath, import.meta.path, '--api-only', CHILD_FLAG],
      env: { ...process.env, PORT: String(port) },
      onMessage: sumWorkerMetrics(() => workers.running),
    },
    configured,
  )
  workers.start(configured - 1)
  return workers
}

/** Drains and exits once the parent process is gone (the child is then adopted by another process). */
function followParent(): void {
  const parent = process.ppid
  setInterval(() => {
    if (process.ppid !== parent) process.kill(process.pid, 'SIGTERM')
  }, 1_000).unref()
}

/** Runs this entry point again with the fetch limit set, as a child whose signals and exit status pass through. */
async function restartWithFetchLimit(): Promise<never> {
  const child = Bun.spawn([process.execPath, ...process.argv.slice(1), CHILD_FLAG], {
    stdio: ['inherit', 'inherit', 'inherit'],
    env: { ...process.env, BUN_CONFIG_MAX_HTTP_REQUESTS: FETCH_LIMIT },
  })
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => child.kill(signal))
  process.exit(await child.exited)
}

if (!process.env.BUN_CONFIG_MAX_HTTP_REQUESTS) await restartWithFetchLimit()

main().catch((error) => {
  if (
    error instanceof ConfigError ||
    error instanceof CatalogError ||
    error instanceof MigrationError
  ) {
    log.error(error.message)
  } else if ((error as { code?: string }).code === 'EADDRINUSE') {
    // The message names the port; the operator needs to know what to do about it.
    log.error(
      `${(error as Error).message} Stop what listens there, or set PORT (API server) or SITE_PORT (site server) to a free port.`,
    )
  } else {
    log.error('start failed', { error })
  }
  process.exit(1)
})
