/**
 * Builds the service from its configuration: stores (real or embedded), catalog, caches, the two
 * servers and the background jobs. main.ts starts it; tests build it with their own settings.
 */
import type { OperatorDeps } from './accounts/operator-deps.ts'
import { MemoryAdmissionStore } from './stores/admission/memory-store.ts'
import { redisKeys } from './stores/admission/redis-keys.ts'
import { duplicateRedis, type RedisClient } from './stores/redis-client.ts'
import { createRedisStore, type RedisAdmissionStore } from './stores/admission/redis-store.ts'
import { LeasedAdmissionStore } from './stores/admission/leased-store.ts'
import type { AdmissionStore } from './stores/admission/store.ts'
import { apiServer } from './http/api-server.ts'
import type { Catalog } from './core/catalog/catalog-types.ts'
import { loadCatalog } from './core/catalog/catalog.ts'
import { catalogListing } from './core/catalog/catalog-listing.ts'
import { MemoryAddressLimiter, RedisAddressLimiter } from './stores/address-limits.ts'
import { ConfigError, type Config } from './core/config.ts'
import { connectPostgres, startEmbedded, type Database } from './stores/db/database.ts'
import { claimForStore } from './stores/db/store-claim.ts'
import { Ceiling } from './pipeline/ceiling.ts'
import type { Gateway } from './pipeline/gateway.ts'
import { Inflight } from './pipeline/inflight.ts'
import { MAX_BODY_BYTES } from './pipeline/read-body.ts'
import { startMaintenance } from './ops/maintenance.ts'
import { RouteHealth } from './providers/route-health.ts'
import { KeyCache } from './stores/keys/key-cache.ts'
import { loadKeysByPrefix } from './stores/keys/load-keys.ts'
import { RecordWriter } from './stores/ledger/record-writer.ts'
import { ResponseStore } from './stores/stored-responses.ts'
import { log, redactUrl } from './core/log.ts'
import { drain, type Listener } from './ops/drain.ts'
import { initMetrics, setBreakerSource } from './core/metrics.ts'
import type { OpsDeps } from './http/ops-routes.ts'
import { resolveOperatorToken } from './ops/operator-token.ts'
import { siteServer } from './http/site-server.ts'
import type { AdminDeps } from './http/admin/admin-deps.ts'
import { systemClock, type Clock } from './core/clock.ts'
import { buildAccountSide } from './app-accounts.ts'
import { migrate, MigrationError } from '../sql/migrate.ts'
import { join } from 'node:path'

export type App = {
  config: Config
  gateway: Gateway
  operator: OperatorDeps
  database: Database
  api: ReturnType<typeof apiServer>
  site: ReturnType<typeof siteServer>
  /** What the admin API and the account routes of the API server use (mailer included). */
  admin: AdminDeps
  operatorToken: string
  /** Starts listening (the API server only, for extra workers); returns the URLs. */
  listen(options?: { apiOnly?: boolean }): { apiUrl: string; siteUrl: string }
  /**
   * Drains and stops: /readyz turns 503, the listeners close, open requests get `drainMs` (default
   * SHUTDOWN_DRAIN_MS) to finish before they are cut, then the writer is flushed and the stores closed.
   * Calling it again returns the same stop.
   */
  stop(options?: { drainMs?: number }): Promise<void>
}

export type AppOverrides = { catalog?: Catalog; database?: Database }

export async function createApp(config: Config, overrides: AppOverrides = {}): Promise<App> {
  const catalog =
    overrides.catalog ??
    (await loadCatalog(config.CATALOG_FILE, process.env, { builtins: config.DEMO_MODEL }))
  for (const provider of catalog.providers.values()) {
    if (!provider.available)
      log.warn(
        `provider ${provider.id} has no key (${provider.apiKeyEnv} is not set); its routes are skipped`,
      )
    if (provider.builtin)
      log.info(
        `provider ${provider.id} is built in (a demo that needs no key; DEMO_MODEL=false leaves it out)`,
      )
  }

  const database =
    overrides.database ??
    (config.DATABASE_URL
      ? connectPostgres(config.DATABASE_URL, config.DATABASE_POOL_SIZE)
      : await reaching('DATA_DIR', config.DATA_DIR, () => startEmbedded(config.DATA_DIR)))
  const applied = await reaching(
    database.kind === 'postgres' ? 'DATABASE_URL' : 'DATA_DIR',
    database.location,
    () => migrate(database.sql),
  )
  if (applied.length > 0) log.info('migrations applied', { applied })
  log.info(`database: ${database.kind === 'embedded' ? 'embedded PGlite' : 'PostgreSQL'}`, {
    location: database.location,
  })
  // The embedded database is claimed by its directory; a server's, here, for the admission store.
  const claim =
    !overrides.database && database.kind === 'postgres'
      ? await reaching('DATABASE_URL', database.location, () =>
          claimForStore(
            config.DATABASE_URL,
            database.location,
            config.REDIS_URL ? 'redis' : 'memory',
          ),
        )
      : undefined

  // One clock for key expiry, sessions and the in-process admission store, so a test moves them together.
  const clock = systemClock()
  const { store, redis } = await reaching(
    'REDIS_URL',
    redactUrl(config.REDIS_URL ?? '', 'redis'),
    () => openStore(config, clock),
  )
  log.info(`admission store: ${store.kind === 'redis' ? 'Redis' : 'in-process (single process)'}`)

  const sql = database.sql
  const accountDefaults = {
    rpm: config.ACCOUNT_RPM_LIMIT,
    tpm: config.ACCOUNT_TPM_LIMIT,
    concurrency: config.ACCOUNT_CONCURRENCY_LIMIT,
  }
  const keys = new KeyCache(
    (prefix) => loadKeysByPrefix(sql, prefix, accountDefaults),
    config.KEY_CACHE_TTL_MS,
  )
  if (redis) {
    const subscriber = duplicateRedis(redis, {
      enableOfflineQueue: true,
      commandTimeout: undefined,
      keyPrefix: undefined,
    })
    subscriber.on('error', () => {})
    await keys.connect(redis, subscriber, `${config.REDIS_KEY_PREFIX}${redisKeys.keyInvalidation}`)
  }

  const catalogReads = {
    limiter: redis ? await RedisAddressLimiter.create(redis) : new MemoryAddressLimiter(),
    perMinute: config.CATALOG_READS_PER_MINUTE,
    listing: catalogListing(catalog, new Date()),
  }
  const writer = new RecordWriter(sql, store, config.LEDGER_FLUSH_MS)
  const inflight = new Inflight(config.HOLD_DEADLINE_MS)
  const health = new RouteHealth({
    failures: config.BREAKER_FAILURES,
    openMs: config.BREAKER_OPEN_MS,
  })
  await health.refreshPauses(sql)
  const gateway: Gateway = {
    catalog,
    sql,
    store,
    keys,
    writer,
    ceiling: new Ceiling(config.MAX_CONCURRENT_REQUESTS),
    inflight,
    responses: new ResponseStore(sql, {
      retentionDays: config.RESPONSES_RETENTION_DAYS,
      // The embedded database has this process as its only writer: a miss is final at once.
      followUpWaitMs: database.kind === 'embedded' ? 0 : config.RESPONSES_FOLLOW_UP_WAIT_MS,
    }),
    catalogReads,
    health,
    clock,
    invalidKeys: { limiter: catalogReads.limiter, perMinute: config.INVALID_KEYS_PER_MINUTE },
    limits: {
      upstreamTimeoutMs: config.UPSTREAM_TIMEOUT_MS,
      streamFirstByteTimeoutMs: config.STREAM_FIRST_BYTE_TIMEOUT_MS,
      streamIdleTimeoutMs: config.STREAM_IDLE_TIMEOUT_MS,
      attemptFirstByteMs: config.UPSTREAM_ATTEMPT_FIRST_BYTE_MS,
      freeRequestsPerDay: config.FREE_REQUESTS_PER_DAY,
      imageCostDeadlineMs: config.IMAGE_COST_DEADLINE_MS,
    },
  }
  const operator: OperatorDeps = {
    sql,
    store,
    keys,
    catalog,
    keyDefaults: {
      dailyLimitNano: config.keyDailyLimitNano,
      monthlyLimitNano: config.keyMonthlyLimitNano,
      accountless: {
        dailyLimitNano: config.accountlessKeyDailyLimitNano,
        monthlyLimitNano: config.accountlessKeyMonthlyLimitNano,
      },
    },
    accountDefaults,
    health,
    clock,
  }
  const { admin, alerts, watcher } = await buildAccountSide(config, {
    operator,
    gateway,
    writer,
    limiter: catalogReads.limiter,
    redis,
    // The API server's own answer, read per request (after `api` below exists): what it bound, not PORT.
    apiPort: () => api.server?.port ?? config.PORT,
  })
  const operatorToken = await resolveOperatorToken(config.ADMIN_TOKEN, config.DATA_DIR)
  let draining = false
  const ops: OpsDeps = {
    readiness: { sql, store, draining: () => draining },
    metricsToken: config.METRICS_TOKEN,
  }
  initMetrics({
    knownModel: (id) =>
      catalog.models.has(id) ||
      catalog.images.has(id) ||
      catalog.aliases.has(id) ||
      catalog.autos.has(id),
    openHolds: () => inflight.size,
    inflightRequests: () => gateway.ceiling.inUse,
  })
  setBreakerSource(() => health.states())
  const api = apiServer(gateway, ops, admin)
  const site = siteServer(admin, {
    operatorToken,
    catalogReads,
    dashboardDir: join(import.meta.dir, '..', 'dashboard', 'dist'),
    ops,
  })

  let stopMaintenance: (() => void) | undefined
  let pauseTimer: ReturnType<typeof setInterval> | undefined
  let stopping: Promise<void> | undefined
  const listening: Listener[] = []
  return {
    config,
    gateway,
    operator,
    database,
    api,
    site,
    admin,
    operatorToken,
    listen(options = {}) {
      writer.start()
      stopMaintenance = startMaintenance(
        { sql, store, inflight, responses: gateway.responses },
        // Often enough that running requests extend their holds before the deadline.
        Math.min(config.SWEEP_INTERVAL_MS, Math.floor(config.HOLD_DEADLINE_MS / 4)),
      )
      alerts.start(config.ALERT_DELIVERY_INTERVAL_MS)
      pauseTimer = setInterval(
        () =>
          health
            .refreshPauses(sql)
            .catch((error) => log.warn('provider pauses not read', { error })),
        config.PAUSE_REFRESH_MS,
      )
      // The body limit is the pipeline's (32 MB, refused in the gateway's error shape), not the server's.
      api.listen({
        hostname: config.HOST,
        port: config.PORT,
        reusePort: config.WORKERS > 1,
        maxRequestBodySize: 1024 * 1024 * 1024,
        idleTimeout: 0,
      })
      listening.push(api.server!)
      const apiUrl = publicUrl(config.PUBLIC_API_URL, api.server!.url)
      if (options.apiOnly) return { apiUrl, siteUrl: '' }
      watcher?.start(config.DEPOSIT_POLL_MS)
      // The site refuses a body past its route's limit from Content-Length (site-server.ts); the server's
      // own bound, a little above the largest, stops one sent without it.
      site.listen({
        hostname: config.HOST,
        port: config.SITE_PORT,
        maxRequestBodySize: MAX_BODY_BYTES + 1024 * 1024,
      })
      listening.push(site.server!)
      return { apiUrl, siteUrl: publicUrl(config.PUBLIC_SITE_URL, site.server!.url) }
    },
    stop(options = {}) {
      stopping ??= (async () => {
        draining = true
        const drained = await drain(
          { inflight, ceiling: gateway.ceiling, listeners: listening },
          options.drainMs ?? config.SHUTDOWN_DRAIN_MS,
        )
        if (listening.length > 0) log.info('drained', drained)
        stopMaintenance?.()
        watcher?.stop()
        clearInterval(pauseTimer)
        alerts.stop()
        await writer.stop()
        await alerts.idle()
        await store.close()
        if (redis) await keys.disconnect()
        if (!overrides.database) await database.close()
        await claim?.release()
      })()
      return stopping
    },
  }
}

async function openStore(
  config: Config,
  clock: Clock,
): Promise<{ store: AdmissionStore; redis?: RedisClient }> {
  const holdDeadlineMs = config.HOLD_DEADLINE_MS
  // Redis takes its time from Redis (TIME); the in-process store from the service's clock.
  if (!config.REDIS_URL)
    return { store: new MemoryAdmissionStore(() => clock.now(), holdDeadlineMs) }
  const redis: RedisAdmissionStore = await createRedisStore({
    url: config.REDIS_URL,
    keyPrefix: config.REDIS_KEY_PREFIX,
    timeoutMs: config.ADMISSION_TIMEOUT_MS,
    holdDeadlineMs,
  })
  const store =
    config.ADMISSION_LEASE_MS > 0
      ? new LeasedAdmissionStore(redis, {
          intervalMs: config.ADMISSION_LEASE_MS,
          ttlMs: config.ADMISSION_LEASE_TTL_MS,
        })
      : redis
  return { store, redis: redis.redis }
}

function publicUrl(configured: string, actual: URL): string {
  return (configured || actual.toString()).replace(/\/$/, '')
}

/**
 * Opens a store; one that cannot be reached or used stops the start naming the setting that points at
 * it, rather than with the driver's message alone ("Connection is closed."). A migration's own error is
 * already its own message, as is a setting's (a DATA_DIR another gateway holds).
 */
async function reaching<T>(setting: string, where: string, open: () => Promise<T>): Promise<T> {
  try {
    return await open()
  } catch (error) {
    if (error instanceof MigrationError || error instanceof ConfigError) throw error
    const reason = error instanceof Error ? error.message : String(error)
    throw new ConfigError(
      `${setting} (${where}) cannot be used: ${reason.replace(/\.$/, '')}. ${setting === 'DATA_DIR' ? 'Check that it is a directory this process may write' : 'Check that it is running and reachable'}, or change ${setting}.`,
    )
  }
}
