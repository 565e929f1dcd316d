/**
 * `bun run admin -- <command>`: the operator's command line, a thin client of the operator API of a
 * running server (SITE_URL, default http://127.0.0.1:<SITE_PORT>), authenticated by ADMIN_TOKEN or the
 * token the server wrote under DATA_DIR. Prints JSON; exits 1 with the server's error on failure.
 */
import { parseArgs } from 'node:util'
import { loadConfig } from '../config/config.ts'
import { operatorTokenPath } from '../site/operator-token.ts'

const usage = `Usage: bun run admin -- <command> [options]

  account create [--credit-usd N]
  account show --account ID
  credit --account ID --usd N [--reason TEXT]
  key create --account ID [--name TEXT] [--rpm N] [--tpm N] [--concurrency N]
             [--daily-usd N|none] [--monthly-usd N|none] [--models a,b]
  key revoke --id ID

Environment: SITE_URL (default http://127.0.0.1:$SITE_PORT), ADMIN_TOKEN (default: DATA_DIR/admin-token).`

const options = {
  account: { type: 'string' },
  'credit-usd': { type: 'string' },
  usd: { type: 'string' },
  reason: { type: 'string' },
  id: { type: 'string' },
  name: { type: 'string' },
  rpm: { type: 'string' },
  tpm: { type: 'string' },
  concurrency: { type: 'string' },
  'daily-usd': { type: 'string' },
  'monthly-usd': { type: 'string' },
  models: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const

type Values = Partial<Record<keyof typeof options, string | boolean>>

class UsageError extends Error {}

function required(values: Values, name: keyof typeof options): string {
  const value = values[name]
  if (typeof value !== 'string' || value === '') throw new UsageError(`--${name} is required`)
  return value
}

function integer(values: Values, name: keyof typeof options): number | undefined {
  const value = values[name]
  if (value === undefined) return undefined
  if (typeof value !== 'string' || !/^\d+$/.test(value)) throw new UsageError(`--${name} must be a whole number`)
  return Number(value)
}

function cap(values: Values, name: 'daily-usd' | 'monthly-usd'): string | null | undefined {
  const value = values[name]
  if (value === undefined) return undefined
  return value === 'none' ? null : String(value)
}

/** The operator API request for a command line. */
function route(words: string[], values: Values): { method: string; path: string; body?: unknown } {
  const command = words.join(' ')
  switch (command) {
    case 'account create':
      return { method: 'POST', path: '/accounts', body: values['credit-usd'] === undefined ? {} : { creditUsd: values['credit-usd'] } }
    case 'account show':
      return { method: 'GET', path: `/accounts/${encodeURIComponent(required(values, 'account'))}` }
    case 'credit':
      return {
        method: 'POST',
        path: `/accounts/${encodeURIComponent(required(values, 'account'))}/credits`,
        body: { usd: required(values, 'usd'), ...(values.reason ? { reason: values.reason } : {}) },
      }
    case 'key create':
      return {
        method: 'POST',
        path: '/keys',
        body: {
          accountId: required(values, 'account'),
          name: values.name,
          rpm: integer(values, 'rpm'),
          tpm: integer(values, 'tpm'),
          concurrency: integer(values, 'concurrency'),
          dailyUsd: cap(values, 'daily-usd'),
          monthlyUsd: cap(values, 'monthly-usd'),
          models: typeof values.models === 'string' ? values.models.split(',').map((model) => model.trim()).filter(Boolean) : undefined,
        },
      }
    case 'key revoke':
      return { method: 'POST', path: `/keys/${encodeURIComponent(required(values, 'id'))}/revoke` }
    default:
      throw new UsageError(command ? `Unknown command: ${command}` : 'No command given')
  }
}

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({ args: Bun.argv.slice(2), options, allowPositionals: true, strict: true })
  if (values.help) {
    console.log(usage)
    return 0
  }
  const request = route(positionals, values)
  const config = loadConfig()
  const base = process.env.SITE_URL?.replace(/\/$/, '') ?? `http://127.0.0.1:${config.SITE_PORT}`
  const tokenFile = Bun.file(operatorTokenPath(config.DATA_DIR))
  const token = config.ADMIN_TOKEN || ((await tokenFile.exists()) ? (await tokenFile.text()).trim() : '')
  if (!token) throw new UsageError(`No operator token: set ADMIN_TOKEN, or start the server once so it writes ${tokenFile.name}`)
  let response: Response
  try {
    response = await fetch(`${base}/operator/v1${request.path}`, {
      method: request.method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: request.body === undefined ? undefined : JSON.stringify(request.body),
    })
  } catch (error) {
    console.error(JSON.stringify({ error: { code: 'unreachable', message: `No server at ${base}: ${(error as Error).message}` } }))
    return 1
  }
  const text = await response.text()
  if (response.ok) {
    console.log(JSON.stringify(JSON.parse(text), null, 2))
    return 0
  }
  console.error(text)
  return 1
}

main().then(
  (code) => process.exit(code),
  (error) => {
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      console.error(`${(error as Error).message}\n\n${usage}`)
      process.exit(2)
    }
    console.error(error)
    process.exit(1)
  },
)
