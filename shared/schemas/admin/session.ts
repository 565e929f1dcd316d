/** Schemas of the admin API's session routes, shared by the site server and the dashboard. */
import { Type, type Static } from '@sinclair/typebox'

export const Role = Type.Union([
  Type.Literal('owner'),
  Type.Literal('admin'),
  Type.Literal('member'),
])
export type Role = Static<typeof Role>

export const Me = Type.Object({
  account: Type.Object({
    id: Type.String(),
    kind: Type.Union([Type.Literal('accountless'), Type.Literal('identity')]),
    status: Type.Union([Type.Literal('active'), Type.Literal('suspended')]),
    /** Why a suspended account is suspended (chargeback, sanctions, abuse, operator); null when active. */
    suspendedReason: Type.Union([Type.String(), Type.Null()]),
  }),
  role: Role,
  /** How the session was opened. */
  via: Type.Union([Type.Literal('link'), Type.Literal('user')]),
  user: Type.Union([
    Type.Null(),
    Type.Object({
      id: Type.String(),
      email: Type.Union([Type.String(), Type.Null()]),
      wallet: Type.Union([Type.String(), Type.Null()]),
    }),
  ]),
  /** Every account the user is a member of (the session acts for one). */
  memberships: Type.Array(Type.Object({ accountId: Type.String(), role: Role })),
})
export type Me = Static<typeof Me>

export const SwitchAccount = Type.Object(
  { accountId: Type.String({ minLength: 1 }) },
  { additionalProperties: false },
)
export type SwitchAccount = Static<typeof SwitchAccount>

export const Done = Type.Object({ ok: Type.Literal(true) })
