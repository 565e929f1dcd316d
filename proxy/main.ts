/**
 * `bun run start`: validates the configuration, migrates the database and serves the API server and the
 * site server, printing both URLs. With WORKERS above 1 it also starts that many minus one processes
 * serving only the API server on the same port (reusePort), each with its own store connections.
 * On SIGINT/SIGTERM it drains: /readyz answers 503, the listeners close, open requests get
 * SHUTDOWN_DRAIN_MS to finish before they are cut and settled, then queued ledger rows are written and
 * the stores closed. Workers get SIGTERM from the first process and drain the same way.
 */
import { createApp } from './app.ts'
import { CatalogError } from './catalog/catalog.ts'
import { ConfigError, loadConfig } from './config/config.ts'
import { log, setLogLevel } from './log/log.ts'
import { MigrationError } from '../sql/migrate.ts'

async function main(): Promise<void> {
  const config = loadConfig()
  setLogLevel(config.LOG_LEVEL)
  if (config.WORKERS > 1 && (!config.REDIS_URL || !config.DATABASE_URL)) {
    throw new ConfigError('WORKERS above 1 needs REDIS_URL and DATABASE_URL: the embedded stores belong to one process.')
  }
  const apiOnly = process.argv.includes('--api-only')
  const app = await createApp(config)
  const { apiUrl, siteUrl } = app.listen({ apiOnly })
  const workers = apiOnly ? [] : startWorkers(config.WORKERS - 1)
  if (!apiOnly) {
    log.info(`API server:  ${apiUrl}  (clients use ${apiUrl}/v1)${config.WORKERS > 1 ? ` on ${config.WORKERS} processes` : ''}`, { url: apiUrl })
    log.info(`Site server: ${siteUrl}  (dashboard, operator API)`, { url: siteUrl })
  }
  let stopping = false
  const stop = async (signal: string) => {
    if (stopping) return
    stopping = true
    log.info(`${signal}: draining`, { drainMs: config.SHUTDOWN_DRAIN_MS, workers: workers.length })
    for (const worker of workers) worker.kill('SIGTERM')
    try {
      await Promise.all([app.stop({ drainMs: config.SHUTDOWN_DRAIN_MS }), ...workers.map((worker) => worker.exited)])
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

/** Extra API-server processes; the first process keeps the site server and restarts none of them. */
function startWorkers(count: number) {
  return Array.from({ length: Math.max(0, count) }, () =>
    Bun.spawn(['bun', import.meta.path, '--api-only'], { stdout: 'inherit', stderr: 'inherit', env: process.env }),
  )
}

main().catch((error) => {
  if (error instanceof ConfigError || error instanceof CatalogError || error instanceof MigrationError) {
    log.error(error.message)
  } else {
    log.error('start failed', { error })
  }
  process.exit(1)
})
