/**
 * `bun run start`: validates the configuration, migrates the database and serves the API server and the
 * site server, printing both URLs. Stops cleanly on SIGINT/SIGTERM, writing queued ledger rows first.
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
  const app = await createApp(config)
  const { apiUrl, siteUrl } = app.listen()
  console.log(`API server:  ${apiUrl}  (clients use ${apiUrl}/v1)`)
  console.log(`Site server: ${siteUrl}`)
  let stopping = false
  const stop = async (signal: string) => {
    if (stopping) return
    stopping = true
    log.info(`${signal}: stopping`)
    await app.stop()
    process.exit(0)
  }
  process.on('SIGINT', () => void stop('SIGINT'))
  process.on('SIGTERM', () => void stop('SIGTERM'))
}

main().catch((error) => {
  if (error instanceof ConfigError || error instanceof CatalogError || error instanceof MigrationError) {
    console.error(error.message)
  } else {
    console.error('Start failed:', error)
  }
  process.exit(1)
})
