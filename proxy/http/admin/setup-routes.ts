/**
 * Accountless setup, public (no session): a proof-of-work challenge for the `altcha` widget, then the
 * setup itself with the solved payload (single use), which returns the two bearer secrets (the API key
 * and the dashboard link) and opens a dashboard-link session. `POST /setup/confirm` records that both
 * secrets were saved; only then is the top-up step offered (see accounts/people/accountless.ts secretsConfirmed).
 */
import { Elysia } from 'elysia'
import {
  ConfirmSecrets,
  SecretsConfirmed,
  SetupChallenge,
  SetupRequest,
  SetupResult,
} from '../../../shared/schemas/admin/setup.ts'
import {
  createAccountless,
  confirmSecrets,
  NO_RECOVERY_WARNING,
} from '../../accounts/people/accountless.ts'
import { countAttempt } from '../../accounts/people/attempts.ts'
import { issueChallenge, spendSolution } from '../../accounts/people/bot-check.ts'
import { dashboardLink, siteBase } from '../../accounts/people/site-url.ts'
import { addressTrust, clientAddress } from '../client-address.ts'
import type { AdminDeps } from './admin-deps.ts'
import { requireSession } from './admin-session.ts'
import { startSession } from './sign-in-session.ts'

export function setupRoutes(deps: AdminDeps) {
  const trust = addressTrust(deps.config)
  return new Elysia()
    .get(
      '/setup/challenge',
      async ({ set }) => {
        set.headers['cache-control'] = 'no-store'
        return issueChallenge(deps)
      },
      {
        response: SetupChallenge,
        detail: {
          summary:
            'A proof-of-work challenge for accountless setup (the altcha widget’s challengeurl)',
        },
      },
    )
    .post(
      '/setup',
      async ({ request, server, body, set }) => {
        await spendSolution(deps, body.altcha)
        // Counted once the bot check passed: failed checks cost an address nothing, solved ones cannot be farmed.
        await countAttempt(
          deps.limiter,
          'accountless-setup',
          clientAddress(server, request, trust),
          deps.config.ACCOUNTLESS_SETUPS_PER_ADDRESS_PER_DAY,
          'accounts created from this address',
          'day',
        )
        const created = await createAccountless(deps)
        await startSession(deps, set, { accountId: created.accountId, userId: null }, 'link')
        set.status = 201
        return {
          accountId: created.accountId,
          key: created.key,
          keyId: created.keyId,
          dashboardLink: dashboardLink(
            siteBase(deps.config.PUBLIC_SITE_URL, request),
            created.linkSecret,
          ),
          confirmBeforeTopUp: true as const,
          warning: NO_RECOVERY_WARNING,
        }
      },
      {
        body: SetupRequest,
        response: { 201: SetupResult },
        detail: {
          summary:
            'Create an accountless account (bot check solved): returns the API key and the dashboard link once, and opens a session',
        },
      },
    )
    .post(
      '/setup/confirm',
      async ({ request }) => {
        // The owner's step: it unlocks the top-up, which is the owner's.
        const session = await requireSession(deps, request, 'billing')
        const at = await confirmSecrets(deps.sql, session.accountId, deps.clock.now())
        return { ok: true as const, secretsConfirmedAt: at.toISOString() }
      },
      {
        body: ConfirmSecrets,
        response: SecretsConfirmed,
        detail: {
          summary:
            'Confirm that both secrets (key and dashboard link) are saved; unlocks the top-up step',
        },
      },
    )
}
