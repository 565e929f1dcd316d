/**
 * What each route reads for its page (its `preload`): the reads start while the page's chunk loads, and
 * the page gets the same answers from the query cache. Back and forward read them again, as following a
 * link does: the router would otherwise show what it read when the page was left, however long ago.
 */
import { revalidate, type RoutePreloadFuncArgs, type SearchParams } from '@solidjs/router'
import { onCleanup } from 'solid-js'
import {
  ACTIVITY_FILTERS,
  getActivity,
  getAccountLimits,
  getActivitySummary,
  getAlerts,
  getBilling,
  getPayments,
  getCatalog,
  getGuardrails,
  getKeyDefaults,
  getKeys,
  getLedger,
  getMe,
  getPresets,
  getRouting,
  getRoutingProviders,
  getTeam,
  getTicket,
  getTickets,
  getTrial,
  getUsage,
  getUsedModels,
  LEDGER_FILTERS,
} from './data.ts'
import { periodFrom } from './pages/usage/usage-data.ts'
import { filterValues } from './url-filters.ts'

/** A query as a preload starts it: called with its arguments, and the key of that call. */
type Read<A extends unknown[]> = { (...args: A): unknown; keyFor: (...args: A) => string }

function start<A extends unknown[]>(
  intent: RoutePreloadFuncArgs['intent'],
  read: Read<A>,
  ...args: A
): void {
  if (intent === 'native') void revalidate(read.keyFor(...args))
  void read(...args)
}

/** A preload starting reads that take nothing from the address. */
const reads =
  (...queries: Read<[]>[]) =>
  ({ intent }: RoutePreloadFuncArgs) => {
    for (const query of queries) start(intent, query)
  }

/**
 * The arguments of the reads that follow the query string, taken from it as the pages take them
 * (url-filters.ts): preload and page ask for the same query, and the page gets the answer its preload
 * started.
 */
function fromAddress(query: SearchParams) {
  return {
    ledger: filterValues(LEDGER_FILTERS, query),
    activity: filterValues(ACTIVITY_FILTERS, query),
    period: periodFrom(filterValues(['days'], query).days),
    ticket: filterValues(['ticket'], query).ticket,
  }
}

export const preloadSession = reads(getMe)
export const preloadOverview = reads(getBilling, getActivitySummary, getKeys)
export const preloadKeys = reads(getKeys, getGuardrails, getKeyDefaults)
export const preloadGuardrails = reads(getGuardrails, getKeys)
export const preloadRouting = reads(getRouting, getRoutingProviders, getCatalog, getAccountLimits)
export const preloadPresets = reads(getPresets, getRouting)
export const preloadPlayground = reads(getTrial)
export const preloadTeam = reads(getTeam)

export function preloadBilling({ location, intent }: RoutePreloadFuncArgs) {
  start(intent, getBilling)
  start(intent, getPayments)
  start(intent, getLedger, fromAddress(location.query).ledger)
  start(intent, getAlerts)
}

export function preloadActivity({ location, intent }: RoutePreloadFuncArgs) {
  start(intent, getActivity, fromAddress(location.query).activity)
  start(intent, getKeys)
  start(intent, getUsedModels)
}

export function preloadUsage({ location, intent }: RoutePreloadFuncArgs) {
  start(intent, getUsage, fromAddress(location.query).period)
}

/** The tickets, and the one open in the address (`?ticket=`). */
export function preloadSupport({ location, intent }: RoutePreloadFuncArgs) {
  start(intent, getTickets)
  const { ticket } = fromAddress(location.query)
  if (ticket) start(intent, getTicket, ticket)
}

/**
 * Back and forward within a page (another ticket, other filters, another period) preload nothing: the
 * route stays the same. The reads of the address gone back to are marked stale here, so the page reads
 * them again, as choosing them does; the reads on screen are left alone.
 */
export function rereadOnHistory(): void {
  const stale = () => {
    const args = fromAddress(Object.fromEntries(new URLSearchParams(window.location.search)))
    void revalidate([
      getLedger.keyFor(args.ledger),
      getActivity.keyFor(args.activity),
      getUsage.keyFor(args.period),
      ...(args.ticket ? [getTicket.keyFor(args.ticket)] : []),
    ])
  }
  window.addEventListener('popstate', stale)
  onCleanup(() => window.removeEventListener('popstate', stale))
}
