/**
 * The gateway under test, started as its own process (`bun proxy/main.ts`) exactly as in production,
 * with a catalog that routes `bench/fast` and `bench/slow` to the fake upstream, the account's rate limits
 * off (the load is far past the default 6,000 requests a minute), its concurrency limit at the default
 * (256, as a deployment has it), and a high concurrency ceiling; and a small client of its operator API.
 */
import { join } from 'node:path'
import { ConfigSchema } from '../proxy/core/config.ts'
import { usdToNano } from '../shared/money.ts'
import { freePort, spawnChild, stopChild, tail, waitForHttp } from './processes.ts'

/** Gateway model ID → upstream model name (which sets the fake upstream's delay or its pace). */
export const benchModels = {
  'bench/fast': 'echo',
  'bench/slow': 'echo?delay=50',
  /** A slow stream: 40 events, 250 ms apart, each its own write. */
  'bench/drip': 'echo?interval=250&events=40',
} as const

export type BenchModel = keyof typeof benchModels

export type RunningGateway = {
  pid: number
  /** SIGTERM and wait for the process to drain and exit (SIGKILL after a grace period). */
  stop(): Promise<void>
  apiUrl: string
  siteUrl: string
  logFile: string
  /** How much of the log the gateway had written when it first answered /health: its start-up notices. */
  startupLogBytes: number
  operator: OperatorClient
}

function catalogYaml(upstreamOrigin: string): string {
  const models = Object.entries(benchModels).map(
    ([id, upstream]) => `  - id: ${id}
    contextLength: 128000
    maxOutputTokens: 4096
    pricing: { inputPerMTok: 1.0, outputPerMTok: 2.0 }
    routes: [ { provider: bench, model: "${upstream}" } ]`,
  )
  return `providers:
  - { id: bench, style: openai, baseUrl: "${upstreamOrigin}/v1", apiKeyEnv: BENCH_PROVIDER_KEY }

models:
${models.join('\n')}
`
}

/** The bench process's environment without any gateway setting, so only the bench's own settings apply. */
function baseEnvironment(): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = { ...process.env }
  for (const name of Object.keys(ConfigSchema.properties)) delete env[name]
  return env
}

/** Starts the gateway against `upstreamOrigin` with the given store settings; resolves once /health answers. */
export async function startGateway(options: {
  repoDir: string
  scratchDir: string
  upstreamOrigin: string
  storeEnv: Record<string, string>
  workers: number
  /** Options for Bun itself, before the script (the profiler's, for `--profile`). */
  bunArgs?: string[]
  /** Settings of the gateway that replace the bench's. */
  env?: Record<string, string>
}): Promise<RunningGateway> {
  const catalogFile = join(options.scratchDir, 'catalog.yaml')
  await Bun.write(catalogFile, catalogYaml(options.upstreamOrigin))
  const [port, sitePort] = [await freePort(), await freePort()]
  const adminToken = `bench-${crypto.randomUUID()}`
  const logFile = join(options.scratchDir, 'gateway.log')
  const env = {
    ...baseEnvironment(),
    ...options.storeEnv,
    HOST: '127.0.0.1',
    PORT: String(port),
    SITE_PORT: String(sitePort),
    DATA_DIR: join(options.scratchDir, 'data'),
    CATALOG_FILE: catalogFile,
    BENCH_PROVIDER_KEY: 'sk-bench-provider',
    ADMIN_TOKEN: adminToken,
    LOG_LEVEL: 'warn',
    ACCOUNT_RPM_LIMIT: '0',
    ACCOUNT_TPM_LIMIT: '0',
    MAX_CONCURRENT_REQUESTS: '4096',
    WORKERS: String(options.workers),
    // As `bun run start` sets it: the gateway process itself, not a restarted child, is the one measured.
    BUN_CONFIG_MAX_HTTP_REQUESTS: '65535',
    ...options.env,
  }
  const child = spawnChild(
    'gateway',
    [process.execPath, ...(options.bunArgs ?? []), 'proxy/main.ts'],
    {
      cwd: options.repoDir,
      env,
      logFile,
    },
  )
  const siteUrl = `http://127.0.0.1:${sitePort}`
  await waitForHttp(
    `${siteUrl}/health`,
    child,
    120_000,
    async () => `gateway log (${logFile}):\n${await tail(logFile)}`,
  )
  return {
    pid: child.pid,
    stop: () => stopChild(child, 30_000),
    apiUrl: `http://127.0.0.1:${port}`,
    siteUrl,
    logFile,
    startupLogBytes: Bun.file(logFile).size,
    operator: new OperatorClient(siteUrl, adminToken),
  }
}

/** The live money state of an account, as GET /operator/v1/accounts/:id reports it. */
export type AccountState = {
  accountId: string
  balanceNano: number
  heldNano: number
  inFlight: number
  ledgerBalanceNano: number
  balanceUsd: string
}

/** The few operator API calls the benchmark makes. */
export class OperatorClient {
  constructor(
    private readonly siteUrl: string,
    private readonly token: string,
  ) {}

  private async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const response = await fetch(`${this.siteUrl}/operator/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${this.token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    const text = await response.text()
    if (!response.ok) throw new Error(`operator API ${method} ${path}: ${response.status} ${text}`)
    return JSON.parse(text) as T
  }

  /** A new account with `creditUsd` of credit. */
  async createAccount(creditUsd: string): Promise<string> {
    return (
      await this.call<{ accountId: string }>('POST', '/accounts', {
        creditNano: usdToNano(creditUsd),
      })
    ).accountId
  }

  /** A key without key-level rate limits (omitted) or spend caps (null). */
  async createKey(accountId: string): Promise<string> {
    return (
      await this.call<{ key: string }>('POST', '/keys', {
        accountId,
        name: 'bench',
        dailyLimitNano: null,
        monthlyLimitNano: null,
      })
    ).key
  }

  /** Lifts the account's concurrency limit (0: none), for loads past the default's 256 at once. */
  async liftConcurrencyLimit(accountId: string): Promise<void> {
    await this.call('PATCH', `/accounts/${encodeURIComponent(accountId)}/limits`, {
      concurrency: 0,
    })
  }

  account(accountId: string): Promise<AccountState> {
    return this.call<AccountState>('GET', `/accounts/${encodeURIComponent(accountId)}`)
  }
}
