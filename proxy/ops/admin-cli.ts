/**
 * `bun run admin -- <command>`: the operator's command line, a thin client of the operator API of a
 * running server (SITE_URL, default http://127.0.0.1:<SITE_PORT>), authenticated by ADMIN_TOKEN or the
 * token the server wrote under DATA_DIR. Prints JSON; exits 1 with the server's error on failure.
 * Operators type dollars; the requests carry the API's own fields (the shared schemas: integer nano-USD,
 * `rpmLimit`, `allowedModels`, …), the same the dashboard sends.
 */
import { parseArgs } from 'node:util'
import { usdToNano } from '../../shared/money.ts'
import type { ApiKeyChanges } from '../../shared/schemas/admin/keys.ts'
import type { Credit, NewAccount, NewAccountKey } from '../../shared/schemas/admin/operator.ts'
import type {
  AccountLimitsChanges,
  GuardrailChanges,
  NewGuardrail,
} from '../../shared/schemas/admin/policy.ts'
import { loadConfig } from '../core/config.ts'
import { storedSecretPath } from '../stores/stored-secrets.ts'

const usage = `Usage: bun run admin -- <command> [options]

  account create [--credit-usd N]
  account show --account ID
  credit --account ID --usd N [--reason TEXT]
  account suspend ACCOUNT_ID --reason chargeback|sanctions|abuse|operator [--note TEXT]
  account unsuspend ACCOUNT_ID
  payments list [--state pending|credited|failed|reversed|held] [--account ID]
  payments release PAYMENT_ID   (credit a held payment)
  payments reject PAYMENT_ID    (a held payment is never credited)
  account set ACCOUNT_ID [--rpm N|none] [--tpm N|none] [--concurrency N|none]
             (account-level limits shared by its keys; none: the default; 0: no limit)
  account limits ACCOUNT_ID
  link replace ACCOUNT_ID   (a new dashboard link for an accountless account, shown once; the old one ends)
  link revoke ACCOUNT_ID    (the dashboard link opens nothing any more)
  key create --account ID [--name TEXT] [--rpm N] [--tpm N] [--concurrency N]
             [--daily-usd N|none] [--monthly-usd N|none] [--models a,b]
  key update KEY_ID [--name TEXT] [--guardrail ID|none] [--models a,b|none] [--rpm N|none] [--tpm N|none]
             [--concurrency N|none] [--daily-usd N|none] [--monthly-usd N|none]
  key revoke --id ID

  preset set ACCOUNT_ID SLUG --model M [--fallbacks a,b] [--temperature X] [--top-p X]
             [--max-tokens N] [--stop a,b]
  preset list ACCOUNT_ID
  preset delete ACCOUNT_ID SLUG

  routing set ACCOUNT_ID [--models a,b|none] [--providers p,q|none]   (a list left out stays as it is)
  routing clear ACCOUNT_ID

  guardrail create ACCOUNT_ID --name TEXT [--models a,b] [--budget-usd N] [--filters JSON]
  guardrail update GUARDRAIL_ID [--name TEXT] [--models a,b|none] [--budget-usd N|none] [--filters JSON]
  guardrail list ACCOUNT_ID
  guardrail delete GUARDRAIL_ID   (its keys keep working without it)

  provider list
  provider pause PROVIDER_ID (--minutes N | --until ISO-TIME) [--reason TEXT]
  provider resume PROVIDER_ID

  support list [--status open|answered|closed]
  support show TICKET_ID
  support answer TICKET_ID --body TEXT [--no-mail]   (e-mails the customer unless --no-mail)
  support close TICKET_ID

Environment: SITE_URL (default http://127.0.0.1:$SITE_PORT), ADMIN_TOKEN (default: DATA_DIR/admin-token).`

const options = {
  account: { type: 'string' },
  'credit-usd': { type: 'string' },
  usd: { type: 'string' },
  reason: { type: 'string' },
  note: { type: 'string' },
  id: { type: 'string' },
  name: { type: 'string' },
  rpm: { type: 'string' },
  tpm: { type: 'string' },
  concurrency: { type: 'string' },
  'daily-usd': { type: 'string' },
  'monthly-usd': { type: 'string' },
  models: { type: 'string' },
  model: { type: 'string' },
  fallbacks: { type: 'string' },
  temperature: { type: 'string' },
  'top-p': { type: 'string' },
  'max-tokens': { type: 'string' },
  stop: { type: 'string' },
  providers: { type: 'string' },
  guardrail: { type: 'string' },
  'budget-usd': { type: 'string' },
  filters: { type: 'string' },
  minutes: { type: 'string' },
  until: { type: 'string' },
  status: { type: 'string' },
  state: { type: 'string' },
  body: { type: 'string' },
  'no-mail': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const

type Values = Partial<Record<keyof typeof options, string | boolean>>

class UsageError extends Error {}

function required(values: Values, name: keyof typeof options): string {
  const value = values[name]
  if (typeof value !== 'string' || value === '') missing(name)
  return value
}

function missing(name: keyof typeof options): never {
  throw new UsageError(`--${name} is required`)
}

function integer(values: Values, name: keyof typeof options): number | undefined {
  const value = values[name]
  if (value === undefined) return undefined
  if (typeof value !== 'string' || !/^\d+$/.test(value))
    throw new UsageError(`--${name} must be a whole number`)
  return Number(value)
}

/** Dollars as integer nano-USD. */
function nano(
  values: Values,
  name: 'credit-usd' | 'usd' | 'daily-usd' | 'monthly-usd' | 'budget-usd',
): number | undefined {
  const value = values[name]
  if (value === undefined) return undefined
  const amount = typeof value === 'string' ? usdToNano(value) : undefined
  if (amount === undefined)
    throw new UsageError(`--${name} must be an amount in USD with at most 9 decimals`)
  return amount
}

/** A spend cap or budget in nano-USD, or null for `none`. */
function cap(
  values: Values,
  name: 'daily-usd' | 'monthly-usd' | 'budget-usd',
): number | null | undefined {
  return values[name] === 'none' ? null : nano(values, name)
}

/** A whole number, or null for `none`. */
function limit(values: Values, name: 'rpm' | 'tpm' | 'concurrency'): number | null | undefined {
  return values[name] === 'none' ? null : integer(values, name)
}

function decimal(values: Values, name: keyof typeof options): number | undefined {
  const value = values[name]
  if (value === undefined) return undefined
  if (typeof value !== 'string' || !/^\d+(\.\d+)?$/.test(value))
    throw new UsageError(`--${name} must be a number`)
  return Number(value)
}

function list(values: Values, name: keyof typeof options): string[] | undefined {
  const value = values[name]
  return typeof value === 'string'
    ? value
        .split(',')
        .map((item) => item.trim())
        .filter(Boolean)
    : undefined
}

/** A comma-separated list, or null for `none`. */
function listOrNone(values: Values, name: keyof typeof options): string[] | null | undefined {
  return values[name] === 'none' ? null : list(values, name)
}

function json(values: Values, name: keyof typeof options): unknown {
  const value = values[name]
  if (typeof value !== 'string') return undefined
  try {
    return JSON.parse(value)
  } catch (error) {
    throw new UsageError(`--${name} must be JSON: ${(error as Error).message}`)
  }
}

/** The positional arguments after the command words, exactly as many as `names`. */
function positional(args: string[], names: string[]): string[] {
  if (args.length !== names.length)
    throw new UsageError(
      `Expected ${names.join(' ')}${args.length > names.length ? `, got also ${args.slice(names.length).join(' ')}` : ''}`,
    )
  return args.map(encodeURIComponent)
}

/** The operator API request for a command line. */
function route(words: string[], values: Values): { method: string; path: string; body?: unknown } {
  const command = words.join(' ')
  switch (command) {
    case 'account create':
      return {
        method: 'POST',
        path: '/accounts',
        body: { creditNano: nano(values, 'credit-usd') } satisfies NewAccount,
      }
    case 'account show':
      return { method: 'GET', path: `/accounts/${encodeURIComponent(required(values, 'account'))}` }
    case 'credit':
      return {
        method: 'POST',
        path: `/accounts/${encodeURIComponent(required(values, 'account'))}/credits`,
        body: {
          amountNano: nano(values, 'usd') ?? missing('usd'),
          reason: values.reason as string | undefined,
        } satisfies Credit,
      }
    case 'key create':
      return {
        method: 'POST',
        path: '/keys',
        body: {
          accountId: required(values, 'account'),
          name: values.name as string | undefined,
          rpmLimit: integer(values, 'rpm'),
          tpmLimit: integer(values, 'tpm'),
          concurrency: integer(values, 'concurrency'),
          dailyLimitNano: cap(values, 'daily-usd'),
          monthlyLimitNano: cap(values, 'monthly-usd'),
          allowedModels: list(values, 'models'),
        } satisfies NewAccountKey,
      }
    case 'key revoke':
      return { method: 'POST', path: `/keys/${encodeURIComponent(required(values, 'id'))}/revoke` }
    default:
      if (!command) throw new UsageError('No command given')
      return policyRoute(words, values)
  }
}

/** Commands that name their records positionally: suspension, keys' policy, presets, routing, guardrails, providers. */
function policyRoute(
  words: string[],
  values: Values,
): { method: string; path: string; body?: unknown } {
  const [group, action, ...args] = words
  switch (`${group} ${action}`) {
    case 'account suspend': {
      const [accountId] = positional(args, ['ACCOUNT_ID'])
      return {
        method: 'POST',
        path: `/accounts/${accountId}/suspend`,
        body: { reason: required(values, 'reason'), note: values.note },
      }
    }
    case 'account unsuspend':
      return { method: 'POST', path: `/accounts/${positional(args, ['ACCOUNT_ID'])[0]}/unsuspend` }
    case 'payments list': {
      const query = new URLSearchParams()
      if (values.state) query.set('state', values.state as string)
      if (values.account) query.set('accountId', values.account as string)
      return { method: 'GET', path: `/payments${query.size ? `?${query}` : ''}` }
    }
    case 'payments release':
    case 'payments reject':
      return {
        method: 'POST',
        path: `/payments/${positional(args, ['PAYMENT_ID'])[0]}/${action}`,
      }
    case 'account set': {
      const [accountId] = positional(args, ['ACCOUNT_ID'])
      const body: AccountLimitsChanges = {
        rpmLimit: limit(values, 'rpm'),
        tpmLimit: limit(values, 'tpm'),
        concurrency: limit(values, 'concurrency'),
      }
      if (Object.values(body).every((value) => value === undefined))
        throw new UsageError('account set needs --rpm, --tpm, --concurrency or several')
      return { method: 'PATCH', path: `/accounts/${accountId}/limits`, body }
    }
    case 'link replace':
      return { method: 'POST', path: `/accounts/${positional(args, ['ACCOUNT_ID'])[0]}/link` }
    case 'link revoke':
      return { method: 'DELETE', path: `/accounts/${positional(args, ['ACCOUNT_ID'])[0]}/link` }
    case 'account limits':
      return { method: 'GET', path: `/accounts/${positional(args, ['ACCOUNT_ID'])[0]}/limits` }
    case 'key update': {
      const [keyId] = positional(args, ['KEY_ID'])
      const guardrail =
        values.guardrail === 'none' ? null : (values.guardrail as string | undefined)
      const body: ApiKeyChanges = {
        name: values.name as string | undefined,
        guardrailId: guardrail,
        allowedModels: listOrNone(values, 'models'),
        rpmLimit: limit(values, 'rpm'),
        tpmLimit: limit(values, 'tpm'),
        concurrency: limit(values, 'concurrency'),
        dailyLimitNano: cap(values, 'daily-usd'),
        monthlyLimitNano: cap(values, 'monthly-usd'),
      }
      return { method: 'PATCH', path: `/keys/${keyId}`, body }
    }
    case 'preset set': {
      const [accountId, slug] = positional(args, ['ACCOUNT_ID', 'SLUG'])
      const params = {
        temperature: decimal(values, 'temperature'),
        top_p: decimal(values, 'top-p'),
        max_tokens: integer(values, 'max-tokens'),
        stop: list(values, 'stop'),
      }
      return {
        method: 'PUT',
        path: `/accounts/${accountId}/presets/${slug}`,
        body: { model: required(values, 'model'), fallbacks: list(values, 'fallbacks'), params },
      }
    }
    case 'preset list':
      return { method: 'GET', path: `/accounts/${positional(args, ['ACCOUNT_ID'])[0]}/presets` }
    case 'preset delete': {
      const [accountId, slug] = positional(args, ['ACCOUNT_ID', 'SLUG'])
      return { method: 'DELETE', path: `/accounts/${accountId}/presets/${slug}` }
    }
    case 'routing set': {
      const [accountId] = positional(args, ['ACCOUNT_ID'])
      if (values.models === undefined && values.providers === undefined)
        throw new UsageError('routing set needs --models, --providers or both')
      return {
        method: 'PUT',
        path: `/accounts/${accountId}/routing`,
        body: { models: listOrNone(values, 'models'), providers: listOrNone(values, 'providers') },
      }
    }
    case 'routing clear':
      return { method: 'DELETE', path: `/accounts/${positional(args, ['ACCOUNT_ID'])[0]}/routing` }
    case 'guardrail create': {
      const [accountId] = positional(args, ['ACCOUNT_ID'])
      const body = {
        name: required(values, 'name'),
        models: list(values, 'models'),
        budgetNano: cap(values, 'budget-usd'),
        filters: json(values, 'filters') as NewGuardrail['filters'],
      } satisfies NewGuardrail
      return { method: 'POST', path: `/accounts/${accountId}/guardrails`, body }
    }
    case 'guardrail update': {
      const [guardrailId] = positional(args, ['GUARDRAIL_ID'])
      const body = {
        name: values.name as string | undefined,
        models: listOrNone(values, 'models'),
        budgetNano: cap(values, 'budget-usd'),
        filters: json(values, 'filters') as GuardrailChanges['filters'],
      } satisfies GuardrailChanges
      return { method: 'PATCH', path: `/guardrails/${guardrailId}`, body }
    }
    case 'guardrail list':
      return { method: 'GET', path: `/accounts/${positional(args, ['ACCOUNT_ID'])[0]}/guardrails` }
    case 'guardrail delete':
      return { method: 'DELETE', path: `/guardrails/${positional(args, ['GUARDRAIL_ID'])[0]}` }
    case 'provider list':
      positional(args, [])
      return { method: 'GET', path: '/providers' }
    case 'provider pause': {
      const [providerId] = positional(args, ['PROVIDER_ID'])
      return {
        method: 'POST',
        path: `/providers/${providerId}/pause`,
        body: { minutes: decimal(values, 'minutes'), until: values.until, reason: values.reason },
      }
    }
    case 'support list':
      positional(args, [])
      return {
        method: 'GET',
        path: `/support/tickets${values.status ? `?status=${encodeURIComponent(String(values.status))}` : ''}`,
      }
    case 'support show':
      return { method: 'GET', path: `/support/tickets/${positional(args, ['TICKET_ID'])[0]}` }
    case 'support answer': {
      const [ticketId] = positional(args, ['TICKET_ID'])
      return {
        method: 'POST',
        path: `/support/tickets/${ticketId}/answer`,
        body: { body: required(values, 'body'), email: values['no-mail'] !== true },
      }
    }
    case 'support close':
      return {
        method: 'POST',
        path: `/support/tickets/${positional(args, ['TICKET_ID'])[0]}/close`,
      }
    case 'provider resume':
      return { method: 'POST', path: `/providers/${positional(args, ['PROVIDER_ID'])[0]}/resume` }
    default:
      throw new UsageError(`Unknown command: ${words.join(' ')}`)
  }
}

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    args: Bun.argv.slice(2),
    options,
    allowPositionals: true,
    strict: true,
  })
  if (values.help) {
    console.log(usage)
    return 0
  }
  const request = route(positionals, values)
  const config = loadConfig()
  const base = process.env.SITE_URL?.replace(/\/$/, '') ?? `http://127.0.0.1:${config.SITE_PORT}`
  const tokenFile = Bun.file(storedSecretPath(config.DATA_DIR, 'operatorToken'))
  const token =
    config.ADMIN_TOKEN || ((await tokenFile.exists()) ? (await tokenFile.text()).trim() : '')
  if (!token)
    throw new UsageError(
      `No operator token: set ADMIN_TOKEN, or start the server once so it writes ${tokenFile.name}`,
    )
  let response: Response
  try {
    response = await fetch(`${base}/operator/v1${request.path}`, {
      method: request.method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: request.body === undefined ? undefined : JSON.stringify(request.body),
    })
  } catch (error) {
    console.error(
      JSON.stringify({
        error: {
          code: 'unreachable',
          message: `No server at ${base}: ${(error as Error).message}`,
        },
      }),
    )
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
    if (
      error instanceof UsageError ||
      (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')
    ) {
      console.error(`${(error as Error).message}\n\n${usage}`)
      process.exit(2)
    }
    console.error(error)
    process.exit(1)
  },
)
