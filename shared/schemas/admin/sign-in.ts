/** Schemas of e-mail and wallet sign-in, shared by the site server and the dashboard. */
import { Type, type Static } from '@sinclair/typebox'
import { EMAIL_RULE } from './field-rules.ts'
import { Role } from './session.ts'

export const Email = Type.String({ ...EMAIL_RULE, description: 'An e-mail address' })

/** The dashboard page to land on after signing in: the link carries it (kept only if it is one). */
const Next = Type.String({
  maxLength: 512,
  description: 'A dashboard path, such as /dashboard/billing',
})

export const EmailSignIn = Type.Object(
  { email: Email, next: Type.Optional(Next) },
  { additionalProperties: false },
)
export type EmailSignIn = Static<typeof EmailSignIn>

/** The same answer whether or not the address is known (no account enumeration). */
export const MailSent = Type.Object({ ok: Type.Literal(true), message: Type.String() })
export type MailSent = Static<typeof MailSent>

export const EmailConfirm = Type.Object(
  { token: Type.String({ minLength: 1, maxLength: 200 }), next: Type.Optional(Next) },
  { additionalProperties: false },
)
export type EmailConfirm = Static<typeof EmailConfirm>

/** A Sign-In with Ethereum (EIP-4361) message and its signature. */
export const WalletProof = Type.Object(
  {
    message: Type.String({ minLength: 1, maxLength: 4096 }),
    signature: Type.String({ pattern: '^0x[0-9a-fA-F]+$', maxLength: 1024 }),
  },
  { additionalProperties: false },
)
export type WalletProof = Static<typeof WalletProof>

/** What a SIWE message for this site must say, and the nonce to put in it. */
export const WalletNonce = Type.Object({
  nonce: Type.String(),
  expiresAt: Type.String({ description: 'ISO 8601' }),
  domain: Type.String(),
  uri: Type.String(),
  chainId: Type.Integer(),
})
export type WalletNonce = Static<typeof WalletNonce>

/** The session just opened (its cookie is set): the account it acts for and the role there. */
export const SignedIn = Type.Object({
  account: Type.Object({
    id: Type.String(),
    kind: Type.Union([Type.Literal('accountless'), Type.Literal('identity')]),
  }),
  role: Role,
  user: Type.Union([
    Type.Null(),
    Type.Object({
      id: Type.String(),
      email: Type.Union([Type.String(), Type.Null()]),
      wallet: Type.Union([Type.String(), Type.Null()]),
    }),
  ]),
  /** Why the link was sent: sign-in, claim of an accountless account, or a team invite. */
  purpose: Type.Union([
    Type.Literal('sign_in'),
    Type.Literal('claim'),
    Type.Literal('invite'),
    Type.Literal('wallet'),
    Type.Literal('link'),
  ]),
})
export type SignedIn = Static<typeof SignedIn>
