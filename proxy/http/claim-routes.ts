/**
 * `POST /me/claim` on the API server: an accountless account gets an identity, the key being the proof
 * of control. `{"email": …}` sends a confirmation link to the address (202); the identity is attached when
 * the link is confirmed. `{"wallet": {"message", "signature"}}` (a Sign-In with Ethereum message for the
 * site or this API's domain) attaches at once. Either way the user becomes the account's owner; keys and
 * balance keep working, and the dashboard link ends (the owner signs in with the identity from then on).
 * An account that already has an identity → 409 `conflict`; a key rotated out (in its grace) → 403.
 * An e-mail address or wallet that already belongs to a user is accepted: that user gains this account.
 * A wallet on the sanctions list is screened as at a wallet sign-in: its user's accounts, this one
 * included, are suspended (reason `sanctions`).
 * Errors in the OpenAI style, like every API endpoint.
 */
import { Value } from '@sinclair/typebox/value'
import { Elysia } from 'elysia'
import { ServiceError } from '../../shared/errors.ts'
import { ClaimRequest } from '../../shared/schemas/claim.ts'
import { keyEndpoint, type JsonAnswer } from '../pipeline/endpoint.ts'
import type { Gateway } from '../pipeline/gateway.ts'
import { screenWallet } from '../accounts/payments/sanctions.ts'
import { countAttempt } from '../accounts/people/attempts.ts'
import { sendLink } from '../accounts/people/send-link.ts'
import { requireCurrentKey } from '../accounts/rotation.ts'
import { siteBaseFromApi, siweSite } from '../accounts/people/site-url.ts'
import { verifyWalletProof } from '../accounts/people/siwe.ts'
import {
  attachIdentity,
  findOrCreateUser,
  normalizeEmail,
  requireAccountless,
} from '../accounts/people/users.ts'
import type { AdminDeps } from './admin/admin-deps.ts'
import { validationError } from './site-error.ts'
import { chatErrorBody } from '../pipeline/styles/chat/render-error.ts'
import { addressTrust, clientAddress } from './client-address.ts'

/** A claim body is a few hundred bytes; anything far larger is not one. */
const MAX_BODY_BYTES = 16 * 1024

export function claimRoutes(gw: Gateway, admin: AdminDeps) {
  const trust = addressTrust(admin.config)
  return new Elysia().post(
    '/me/claim',
    ({ request, server }) => {
      const address = clientAddress(server, request, trust)
      return keyEndpoint(
        gw,
        request,
        { style: 'account', render: () => chatErrorBody, address: () => address },
        (key) => {
          requireCurrentKey(key)
          return claim(admin, request, key.accountId, address)
        },
      )
    },
    { parse: 'none' },
  )
}

async function claim(
  deps: AdminDeps,
  request: Request,
  accountId: string,
  address: string,
): Promise<JsonAnswer> {
  const body = await readClaim(request)
  await requireAccountless(deps.sql, accountId)
  const site = siteBaseFromApi(deps.config, request)
  if ('email' in body) {
    const email = normalizeEmail(body.email)
    await countAttempt(
      deps.limiter,
      'sign-in-mail',
      address,
      deps.config.SIGN_IN_ATTEMPTS_PER_MINUTE,
      'claim mails requested from this address',
    )
    await sendLink(deps, { email, purpose: 'claim', accountId }, site)
    const message = `A confirmation link was sent to ${email}. The address is attached to account ${accountId} when the link is confirmed.`
    return { body: { ok: true, accountId, email, message }, status: 202 }
  }
  const apiBase = (deps.config.PUBLIC_API_URL || new URL(request.url).origin).replace(/\/+$/, '')
  const sites = [siweSite(site), siweSite(apiBase)]
  const wallet = await verifyWalletProof(
    deps.sql,
    body.wallet,
    { sites, chainId: deps.config.SIWE_CHAIN_ID },
    deps.clock.now(),
    'wallet.message',
  ).catch((error) => {
    // On the API server a 401 says "your API key is wrong" to the SDKs: a refused message is a bad request.
    throw error instanceof ServiceError && error.code === 'unauthorized'
      ? new ServiceError('invalid_request', error.message, error.details)
      : error
  })
  const userId = await deps.sql.begin(async (tx) => {
    const user = await findOrCreateUser(tx, { wallet })
    await attachIdentity(tx, accountId, user)
    return user
  })
  await deps.keys.invalidate({ accountId })
  // As at a wallet sign-in: a listed wallet's accounts, this one now among them, are suspended.
  await screenWallet(deps, deps.sanctions, userId, wallet)
  return { body: { ok: true, accountId, kind: 'identity', wallet } }
}

async function readClaim(request: Request): Promise<ClaimRequest> {
  const text = await request.text()
  if (text.length > MAX_BODY_BYTES)
    throw new ServiceError('payload_too_large', `The claim body is over ${MAX_BODY_BYTES} bytes.`)
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    throw new ServiceError(
      'invalid_request',
      'The body is not valid JSON: send {"email": "…"} or {"wallet": {"message": "…", "signature": "0x…"}}.',
    )
  }
  if (
    !body ||
    typeof body !== 'object' ||
    Array.isArray(body) ||
    !('email' in body || 'wallet' in body)
  ) {
    throw new ServiceError(
      'invalid_request',
      'Send {"email": "…"} or {"wallet": {"message": "…", "signature": "0x…"}}.',
    )
  }
  // Check against the variant the body chose, so the error names its field rather than "no union member".
  const variant = ClaimRequest.anyOf['email' in body ? 0 : 1]
  const first = Value.Errors(variant, body).First()
  if (first) throw validationError('body', { valueError: first })
  return body as ClaimRequest
}
