/**
 * Wallet sign-in with Sign-In with Ethereum (EIP-4361): a single-use nonce (public, limited per client
 * address), then the signed message. The message must name this site (domain and URI) and the configured
 * chain; the user is found or created by wallet address and the session acts for their most recent
 * account (a new one of their own when they have none). A wallet on the sanctions list suspends the
 * user's accounts first (accounts/payments/sanctions.ts).
 */
import { Elysia } from 'elysia'
import { SignedIn, WalletNonce, WalletProof } from '../../../shared/schemas/admin/sign-in.ts'
import { addressTrust, clientAddress } from '../client-address.ts'
import { countAttempt } from '../../accounts/people/attempts.ts'
import { siteBase, siweSite } from '../../accounts/people/site-url.ts'
import { issueWalletNonce, verifyWalletProof } from '../../accounts/people/siwe.ts'
import { accountForSignIn, findOrCreateUser } from '../../accounts/people/users.ts'
import { screenWallet } from '../../accounts/payments/sanctions.ts'
import type { AdminDeps } from './admin-deps.ts'
import { startSession } from './sign-in-session.ts'

export function walletRoutes(deps: AdminDeps) {
  const trust = addressTrust(deps.config)
  return new Elysia()
    .get(
      '/auth/wallet/nonce',
      async ({ request, server, set }) => {
        await countAttempt(
          deps.limiter,
          'wallet',
          clientAddress(server, request, trust),
          deps.config.SIGN_IN_ATTEMPTS_PER_MINUTE,
          'wallet sign-in nonces requested from this address',
        )
        const { nonce, expiresAt } = await issueWalletNonce(
          deps.sql,
          deps.config.WALLET_NONCE_TTL_MS,
          deps.clock.now(),
        )
        const site = siweSite(siteBase(deps.config.PUBLIC_SITE_URL, request))
        set.headers['cache-control'] = 'no-store'
        return {
          nonce,
          expiresAt: expiresAt.toISOString(),
          domain: site.domain,
          uri: site.origin,
          chainId: deps.config.SIWE_CHAIN_ID,
        }
      },
      {
        response: WalletNonce,
        detail: {
          summary:
            'A single-use nonce and the domain, URI and chain a Sign-In with Ethereum message must name',
        },
      },
    )
    .post(
      '/auth/wallet',
      async ({ request, body, set }) => {
        const site = siweSite(siteBase(deps.config.PUBLIC_SITE_URL, request))
        const wallet = await verifyWalletProof(
          deps.sql,
          body,
          { sites: [site], chainId: deps.config.SIWE_CHAIN_ID },
          deps.clock.now(),
        )
        const owner = await deps.sql.begin(async (tx) => {
          const userId = await findOrCreateUser(tx, { wallet })
          return { userId, accountId: (await accountForSignIn(tx, userId)).accountId }
        })
        // A listed wallet's accounts are suspended; the session keeps read and support access.
        await screenWallet(deps, deps.sanctions, owner.userId, wallet)
        return startSession(deps, set, owner, 'wallet')
      },
      {
        body: WalletProof,
        response: SignedIn,
        detail: { summary: 'Sign in with a signed Sign-In with Ethereum (EIP-4361) message' },
      },
    )
}
