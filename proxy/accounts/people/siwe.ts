/**
 * Sign-In with Ethereum (EIP-4361), verified locally with viem (no RPC): the message must name this
 * site's domain and origin, the configured chain, a nonce this server issued (unexpired, and consumed
 * here: single use, atomically), and be within its time bounds; its signature must recover to the address
 * it names (an EOA signature; contract wallets would need an RPC and are not supported).
 */
import type { Sql } from 'postgres'
import type { Hex } from 'viem'
import { ServiceError } from '../../../shared/errors.ts'
import type { WalletProof } from '../../../shared/schemas/admin/sign-in.ts'

/** A message issued this far in the future is refused (clocks differ a little, not more). */
const CLOCK_SKEW_MS = 5 * 60_000

/** viem is loaded on the first wallet sign-in: processes that never see one (API workers) never carry it. */
const viem = () =>
  Promise.all([import('viem'), import('viem/siwe')]).then(([core, siwe]) => ({ ...core, ...siwe }))

export async function issueWalletNonce(
  sql: Sql,
  ttlMs: number,
  nowMs: number,
): Promise<{ nonce: string; expiresAt: Date }> {
  const nonce = (await viem()).generateSiweNonce()
  const expiresAt = new Date(nowMs + ttlMs)
  await sql`DELETE FROM wallet_nonces WHERE expires_at <= ${new Date(nowMs)}`
  await sql`INSERT INTO wallet_nonces (nonce, expires_at) VALUES (${nonce}, ${expiresAt})`
  return { nonce, expiresAt }
}

/** What the message must say: one of the accepted sites (domain and origin), and the chain. */
export type SiweExpectation = { sites: { domain: string; origin: string }[]; chainId: number }

/** The wallet address (lowercase) the proof signs in, or the refusal naming what is wrong. */
export async function verifyWalletProof(
  sql: Sql,
  proof: WalletProof,
  expected: SiweExpectation,
  nowMs: number,
  param = 'message',
): Promise<string> {
  const refuse = (reason: string) =>
    new ServiceError('unauthorized', `${param}: ${reason}`, { param })
  const { getAddress, parseSiweMessage, validateSiweMessage } = await viem()
  const message = parseSiweMessage(proof.message)
  const { address, domain, uri, chainId, nonce, version } = message
  if (!address || !domain || !uri || !chainId || !nonce || version !== '1') {
    throw new ServiceError(
      'invalid_request',
      `${param}: not a Sign-In with Ethereum (EIP-4361) message: it needs a domain, an address, URI, Version 1, Chain ID and Nonce`,
      { param },
    )
  }
  const site = expected.sites.find((candidate) => candidate.domain === domain)
  if (!site)
    throw refuse(
      `the domain must be ${expected.sites.map((candidate) => candidate.domain).join(' or ')} (the message says ${domain})`,
    )
  if (originOf(uri) !== site.origin)
    throw refuse(`the URI must be on ${site.origin} (the message says ${uri})`)
  if (chainId !== expected.chainId)
    throw refuse(`the chain ID must be ${expected.chainId} (the message says ${chainId})`)
  if (message.expirationTime && message.expirationTime.getTime() <= nowMs)
    throw refuse(`the message expired at ${message.expirationTime.toISOString()}`)
  if (message.notBefore && message.notBefore.getTime() > nowMs)
    throw refuse(`the message is not valid before ${message.notBefore.toISOString()}`)
  if (message.issuedAt && message.issuedAt.getTime() > nowMs + CLOCK_SKEW_MS)
    throw refuse(`the message is issued in the future (${message.issuedAt.toISOString()})`)
  if (!validateSiweMessage({ message, domain, nonce, address, time: new Date(nowMs) }))
    throw refuse('the message is not valid')
  if (!(await signedBy(proof, address)))
    throw refuse(`the signature is not ${getAddress(address)}'s signature of this message`)
  // Consumed last: a refused message leaves its nonce usable for a corrected one.
  const used = await sql`
    UPDATE wallet_nonces SET used_at = ${new Date(nowMs)}
    WHERE nonce = ${nonce} AND used_at IS NULL AND expires_at > ${new Date(nowMs)} RETURNING 1`
  if (used.length === 0)
    throw refuse(
      'the nonce is unknown, expired or already used; get a new one from GET /admin/v1/auth/wallet/nonce',
    )
  return address.toLowerCase()
}

async function signedBy(proof: WalletProof, address: Hex): Promise<boolean> {
  try {
    return await (await viem()).verifyMessage({
      address,
      message: proof.message,
      signature: proof.signature as Hex,
    })
  } catch {
    return false
  }
}

function originOf(uri: string): string | undefined {
  try {
    return new URL(uri).origin
  } catch {
    return undefined
  }
}
