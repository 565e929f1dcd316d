/** Schemas of accountless setup and the dashboard link, shared by the site server and the dashboard. */
import { Type, type Static } from '@sinclair/typebox'

/** A proof-of-work challenge for the `altcha` widget (its `challengeurl` answer). */
export const SetupChallenge = Type.Object({
  parameters: Type.Record(Type.String(), Type.Unknown()),
  signature: Type.String(),
})
export type SetupChallenge = Static<typeof SetupChallenge>

/** The widget's solved payload (base64 JSON of the challenge and its solution), as the form field `altcha`. */
export const SetupRequest = Type.Object(
  { altcha: Type.String({ minLength: 1, maxLength: 8192 }) },
  { additionalProperties: false },
)
export type SetupRequest = Static<typeof SetupRequest>

export const SetupResult = Type.Object({
  accountId: Type.String(),
  /** The API key, shown this once: only its prefix and hash are stored. */
  key: Type.String(),
  keyId: Type.String(),
  /** The permanent dashboard link; its secret is in the fragment, so it never reaches a server log. */
  dashboardLink: Type.String(),
  /** The top-up step is offered only after POST /setup/confirm. */
  confirmBeforeTopUp: Type.Literal(true),
  /** What the page must say before the user leaves: no recovery without an identity. */
  warning: Type.String(),
})
export type SetupResult = Static<typeof SetupResult>

/** The user confirms having saved both secrets: the key and the dashboard link. */
export const ConfirmSecrets = Type.Object(
  { keySaved: Type.Literal(true), linkSaved: Type.Literal(true) },
  { additionalProperties: false },
)
export type ConfirmSecrets = Static<typeof ConfirmSecrets>

export const SecretsConfirmed = Type.Object({
  ok: Type.Literal(true),
  secretsConfirmedAt: Type.String({ description: 'ISO 8601' }),
})
export type SecretsConfirmed = Static<typeof SecretsConfirmed>

/** The secret of a dashboard link (the part after `#link=`), exchanged for a session cookie. */
export const LinkExchange = Type.Object(
  { secret: Type.String({ minLength: 1, maxLength: 200 }) },
  { additionalProperties: false },
)
export type LinkExchange = Static<typeof LinkExchange>

/** A replaced dashboard link, shown once: the old one no longer opens the account. */
export const ReplacedLink = Type.Object({ accountId: Type.String(), dashboardLink: Type.String() })
export type ReplacedLink = Static<typeof ReplacedLink>

export const RevokedLink = Type.Object({ accountId: Type.String(), revoked: Type.Literal(true) })
export type RevokedLink = Static<typeof RevokedLink>
