/**
 * `POST /me/claim` on the API server (authenticated with a key of the account): attach an e-mail address
 * (confirmed by a link sent to it) or a wallet (a signed Sign-In with Ethereum message, attached at once).
 */
import { Type, type Static } from '@sinclair/typebox'
import { Email, WalletProof } from './admin/sign-in.ts'

export const ClaimRequest = Type.Union([
  Type.Object({ email: Email }, { additionalProperties: false }),
  Type.Object({ wallet: WalletProof }, { additionalProperties: false }),
])
export type ClaimRequest = Static<typeof ClaimRequest>

/** The e-mail variant: a confirmation link was sent; the identity is attached when it is confirmed. */
export const ClaimMailSent = Type.Object({
  ok: Type.Literal(true),
  accountId: Type.String(),
  email: Type.String(),
  message: Type.String(),
})
export type ClaimMailSent = Static<typeof ClaimMailSent>

/** The wallet variant: attached at once. */
export const Claimed = Type.Object({
  ok: Type.Literal(true),
  accountId: Type.String(),
  kind: Type.Literal('identity'),
  wallet: Type.String(),
})
export type Claimed = Static<typeof Claimed>
