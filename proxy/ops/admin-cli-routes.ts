/**
 * The operator command line's commands: each command line becomes one request to the operator API
 * (method, path and body in the API's own fields).
 */
import type { ApiKeyChanges } from '../../shared/schemas/admin/keys.ts'
import type { Credit, NewAccount, NewAccountKey } from '../../shared/schemas/admin/operator.ts'
import type {
  AccountLimitsChanges,
  GuardrailChanges,
  NewGuardrail,
} from '../../shared/schemas/admin/policy.ts'
import {
  cap,
  count,
  decimal,
  integer,
  json,
  limit,
  list,
  listOrNone,
  missing,
  nano,
  options,
  positional,
  positiveNano,
  required,
  UsageError,
  type Values,
} from './admin-cli-args.ts'

/** The operator API request for a command line. */
export function route(
  words: string[],
  values: Values,
): { method: string; path: string; body?: unknown } {
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
          amountNano: positiveNano(values, 'usd'),
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
          rpmLimit: count(values, 'rpm'),
          tpmLimit: count(values, 'tpm'),
          concurrency: count(values, 'concurrency'),
          dailyLimitNano: cap(values, 'daily-usd'),
          monthlyLimitNano: cap(values, 'monthly-usd'),
          allowedModels: list(values, 'models'),
        } satisfies NewAccountKey,
      }
    case 'key revoke':
      return { method: 'POST', path: `/keys/${encodeURIComponent(required(values, 'id'))}/revoke` }
    default: {
      if (!command) throw new UsageError('No command given')
      const named = flagCommands.find((flags) => command.startsWith(`${flags} `))
      if (named)
        throw new UsageError(
          `${named} names its records with options, not positionally (got ${words.slice(named.split(' ').length).join(' ')})`,
        )
      return policyRoute(words, values)
    }
  }
}

/** The commands above, which take `--account`, `--id` and other options and no positional argument. */
const flagCommands = ['account create', 'account show', 'credit', 'key create', 'key revoke']

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
      if ((values.minutes === undefined) === (values.until === undefined))
        throw new UsageError('Give either --minutes or --until: how long the pause lasts')
      return {
        method: 'POST',
        path: `/providers/${providerId}/pause`,
        body: {
          minutes: decimal(values, 'minutes', { above: true }),
          until: values.until,
          reason: values.reason,
        },
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
