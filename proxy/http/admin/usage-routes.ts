/**
 * Usage and activity of the session's account (read): totals by period from the hourly rollup, the recent
 * requests from the request log by index (see accounts/usage/activity.ts), and the last 24 hours by hour.
 */
import { Elysia } from 'elysia'
import {
  Activity,
  ActivityQuery,
  ActivitySummary,
  Usage,
  UsageQuery,
} from '../../../shared/schemas/admin/usage.ts'
import { readActivity, readActivitySummary } from '../../accounts/usage/activity.ts'
import { readUsage } from '../../accounts/usage/usage.ts'
import type { AdminDeps } from './admin-deps.ts'
import { requireSession } from './admin-session.ts'

export function usageRoutes(deps: AdminDeps) {
  return new Elysia()
    .get(
      '/usage',
      async ({ request, query }) => {
        const session = await requireSession(deps, request, 'read')
        return readUsage(deps.sql, session.accountId, query, deps.clock.now())
      },
      {
        query: UsageQuery,
        response: Usage,
        detail: { summary: 'Usage totals by hour or day, optionally by model or key' },
      },
    )
    .get(
      '/activity',
      async ({ request, query }) => {
        const session = await requireSession(deps, request, 'read')
        return readActivity(deps.sql, session.accountId, query)
      },
      {
        query: ActivityQuery,
        response: Activity,
        detail: { summary: "The account's recent requests, newest first (keyset pages)" },
      },
    )
    .get(
      '/activity/summary',
      async ({ request }) => {
        const session = await requireSession(deps, request, 'read')
        return readActivitySummary(deps.sql, session.accountId, deps.clock.now())
      },
      { response: ActivitySummary, detail: { summary: 'The last 24 hours by hour' } },
    )
}
