/** Command-line options of `bun run bench:accounts`. */
import { parseArgs } from 'node:util'
import { usdToNano } from '../shared/money.ts'
import { UsageError } from './options.ts'

export const usage = `Usage: bun run bench:accounts [--accounts N] [--duration D] [--connections N] [--out FILE]

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

export type Options = {
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

export function parseOptions(args: string[]): Options | undefined {
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
