/**
 * What the pages read, as named queries (`query` from the router): a route's preload starts the reads
 * its page shows while the page's chunk loads, the page reads the same answers (`createAsync`), and after
 * a change the page reads one again wherever it is shown (`revalidate(getX.key)`). `revalidate` matches
 * keys by prefix, so no name here is the start of another ('tickets' and 'ticketById', not 'ticket').
 */
import { query } from '@solidjs/router'
import type { AlertSettings } from '../../shared/schemas/admin/alerts.ts'
import type {
  Billing,
  Deposit,
  Ledger,
  Payments,
  TopUp,
} from '../../shared/schemas/admin/billing.ts'
import type { ApiKeys, KeyDefaults } from '../../shared/schemas/admin/keys.ts'
import type { TrialStatus } from '../../shared/schemas/admin/playground.ts'
import type {
  AccountLimits,
  Guardrails,
  Presets,
  Routing,
  RoutingProviders,
} from '../../shared/schemas/admin/policy.ts'
import type { Me } from '../../shared/schemas/admin/session.ts'
import type { Ticket, TicketList } from '../../shared/schemas/admin/support.ts'
import type { Team } from '../../shared/schemas/admin/team.ts'
import type { Activity, ActivitySummary, Usage } from '../../shared/schemas/admin/usage.ts'
import { api, ApiError, get, queryString } from './api.ts'
import { periodDays, periodStartMs, type Period } from './pages/usage/usage-data.ts'

/** Settles once a dashboard link from the address has been exchanged for a session (at once without one). */
let linkExchange: Promise<unknown> = Promise.resolve()
/** The link in the address opened nothing (replaced, revoked, or its account claimed). */
let linkRefused = false

/** Whether the dashboard link this page was opened with was refused; the sign-in page says so. */
export const dashboardLinkRefused = () => linkRefused

/** Exchanges a dashboard link in the fragment (`/dashboard#link=<secret>`) for a session; the secret leaves the address bar first. */
function exchangeLink(): Promise<unknown> {
  const match = /(?:^#|&)link=([^&]+)/.exec(window.location.hash)
  if (!match) return Promise.resolve()
  history.replaceState(history.state, '', window.location.pathname + window.location.search)
  const exchange = api('POST', '/session/link', { secret: decodeURIComponent(match[1]!) })
  // The page's reads start beside the session's: they wait, so they are made with the session the link
  // opens. A failed exchange is the session read's to show.
  linkExchange = exchange.catch((error) => {
    linkRefused = error instanceof ApiError && error.status === 401
  })
  return exchange
}

/**
 * Settles once the latest session read is in: false when it said signed out (401), true otherwise (a
 * failure of another kind leaves the page's reads to show their own).
 */
let sessionOpen: Promise<boolean> = Promise.resolve(true)

/**
 * An admin API read, made once a dashboard link being exchanged has opened its session and the session
 * read is in; not made at all when that said signed out (the shell sends the user to sign in instead).
 */
const read = async <T>(path: string) => {
  await linkExchange
  if (!(await sessionOpen)) throw new ApiError(401, 'unauthorized', 'Sign in first.')
  return get<T>(path)
}

/** The session: who acts for which account with which role. */
export const getMe = query(() => {
  // Set before the route's pages start their reads (the /dashboard route's preload runs first).
  const me = exchangeLink().then(() => get<Me>('/me'))
  sessionOpen = me.then(
    () => true,
    (error: unknown) => !(error instanceof ApiError && error.status === 401),
  )
  return me
}, 'me')

export const getBilling = query(() => read<Billing>('/billing'), 'billing')
export const getPayments = query(() => read<Payments>('/billing/payments'), 'payments')
export const getDeposit = query(() => read<Deposit>('/billing/deposit'), 'deposit')
/** The last 24 hours in totals. */
export const getActivitySummary = query(
  () => read<ActivitySummary>('/activity/summary'),
  'activitySummary',
)
export const getKeys = query(() => read<ApiKeys>('/keys'), 'keys')
/** The caps a new key gets when its form leaves them empty. */
export const getKeyDefaults = query(() => read<KeyDefaults>('/keys/defaults'), 'keyDefaults')
export const getGuardrails = query(() => read<Guardrails>('/guardrails'), 'guardrails')
export const getPresets = query(() => read<Presets>('/presets'), 'presets')
export const getRouting = query(() => read<Routing>('/routing'), 'routing')
/** The limits every key of the account shares: its own, and those in force. */
export const getAccountLimits = query(() => read<AccountLimits>('/account/limits'), 'accountLimits')
/** The providers the account may restrict routing to, with the models each serves. */
export const getRoutingProviders = query(
  () => read<RoutingProviders>('/routing/providers'),
  'providers',
)
export const getAlerts = query(() => read<AlertSettings>('/alerts'), 'alerts')
export const getTeam = query(() => read<Team>('/team'), 'team')
/** The account's free playground messages: how many are left and the model that answers them. */
export const getTrial = query(() => read<TrialStatus>('/playground/trial'), 'trial')
export const getTickets = query(
  () => read<TicketList>('/support/tickets').then((answer) => answer.tickets),
  'tickets',
)
export const getTicket = query(
  (id: string) => read<Ticket>(`/support/tickets/${encodeURIComponent(id)}`),
  'ticketById',
)

/** The ledger's filters, as the address and the admin API name them. */
export const LEDGER_FILTERS = ['kind', 'from', 'to'] as const
export type LedgerFilters = Record<(typeof LEDGER_FILTERS)[number], string>

/** A page of the ledger, newest first; `before` continues after an earlier page. */
export const readLedgerPage = (filters: LedgerFilters, before?: string) =>
  read<Ledger>(`/billing/ledger${queryString({ ...filters, before })}`)
/** The ledger's first page (older ones are appended on request, outside the query). */
export const getLedger = query((filters: LedgerFilters) => readLedgerPage(filters), 'ledger')

/** Activity's filters, as the address and the admin API name them. */
export const ACTIVITY_FILTERS = ['keyId', 'model', 'status', 'from', 'to'] as const
export type ActivityFilters = Record<(typeof ACTIVITY_FILTERS)[number], string>

/** A page of the account's requests, newest first; `before` continues after an earlier page. */
export const readActivityPage = (filters: ActivityFilters, before?: string) =>
  read<Activity>(`/activity${queryString({ ...filters, before })}`)
/** The requests' first page (older ones are appended on request, outside the query). */
export const getActivity = query(
  (filters: ActivityFilters) => readActivityPage(filters),
  'activityPage',
)

const MODEL_LOOKBACK_MS = 90 * 86_400_000

/** The models this account used in the last 90 days, from the rollup: what is worth filtering activity by. */
export const getUsedModels = query(async () => {
  const usage = await read<Usage>(
    `/usage${queryString({ granularity: 'day', groupBy: 'model', from: new Date(Date.now() - MODEL_LOOKBACK_MS).toISOString() })}`,
  )
  return [...new Set(usage.buckets.map((bucket) => bucket.model ?? ''))].filter(Boolean).sort()
}, 'usedModels')

/** A period's usage per UTC day: in total, by model and by key, with the period's days. */
export type UsageData = { days: number[]; total: Usage; byModel: Usage; byKey: Usage }

export const getUsage = query(async (days: Period): Promise<UsageData> => {
  const now = Date.now()
  const from = new Date(periodStartMs(days, now)).toISOString()
  const byGroup = (groupBy?: 'model' | 'key') =>
    read<Usage>(`/usage${queryString({ granularity: 'day', from, groupBy })}`)
  const [total, byModel, byKey] = await Promise.all([byGroup(), byGroup('model'), byGroup('key')])
  return { days: periodDays(days, now), total, byModel, byKey }
}, 'usage')

/** The top-up step's answer: how to add credit (the server offers it once setup's secrets are confirmed). */
export const getTopUp = query(() => api<TopUp>('POST', '/billing/top-up'), 'topUp')

/** One entry of `GET /api/v1/models`, the fields the pickers use. */
export type CatalogEntry = {
  id: string
  display_name?: string
  free?: boolean
  alias_of?: string
  auto_candidates?: string[]
  /** Per million tokens for a chat model; an image model's are per image (`unit: 'usd_per_image'`). */
  pricing?: { unit?: string; input?: string; output?: string }
  /** The client styles it is called with: `chat`, `messages`, `responses`, or `images` for an image model. */
  styles?: string[]
}

/** Whether the entry answers chat (an image model does not): what chat and presets may use. */
export const canChat = (entry: CatalogEntry) => entry.styles?.includes('chat') ?? true

/**
 * The entries that lead to a model in `allowed` (the exact model IDs the account's routing allows; none:
 * every entry): an alias through the models it stands for (at most three hops, as requests resolve
 * them), an automatic choice when one of its candidates is.
 */
export function routedEntries(
  entries: CatalogEntry[],
  allowed: readonly string[] | null | undefined,
): CatalogEntry[] {
  if (!allowed) return entries
  const permitted = new Set(allowed)
  const byId = new Map(entries.map((entry) => [entry.id, entry]))
  return entries.filter((entry) => {
    if (entry.auto_candidates) return entry.auto_candidates.some((id) => permitted.has(id))
    let current: CatalogEntry | undefined = entry
    for (let hop = 0; current?.alias_of && hop < 3; hop++) current = byId.get(current.alias_of)
    return !!current && !current.alias_of && permitted.has(current.id)
  })
}

let catalogRead: Promise<CatalogEntry[]> | undefined

/**
 * The public catalog, read once per page load rather than once per picker: it changes only when the
 * service is deployed. A failed read is made again the next time it is asked for.
 */
export const getCatalog = query((): Promise<CatalogEntry[]> => {
  catalogRead ??= fetch('/api/v1/models', { headers: { accept: 'application/json' } })
    .then(async (response) => {
      if (!response.ok) {
        const body = (await response.json().catch(() => ({}))) as {
          error?: { code?: string; message?: string }
        }
        throw new ApiError(
          response.status,
          body.error?.code ?? 'internal_error',
          body.error?.message ?? `The model list answered ${response.status}.`,
        )
      }
      return ((await response.json()) as { data: CatalogEntry[] }).data
    })
    .catch((error: unknown) => {
      catalogRead = undefined
      throw error instanceof ApiError
        ? error
        : new ApiError(0, 'network', 'The model list could not be reached.')
    })
  return catalogRead
}, 'catalog')

/**
 * Drops every answer read so far. The router keeps answers for back and forward, and the next session
 * may be someone else's or another account's: nothing read for the last one may be shown to it.
 */
export function forgetReads(): void {
  query.clear()
}
