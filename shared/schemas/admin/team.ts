/** Schemas of the team routes, shared by the site server and the dashboard. */
import { Type, type Static } from '@sinclair/typebox'
import { Role } from './session.ts'
import { Email } from './sign-in.ts'

export const InvitedRole = Type.Union([Type.Literal('admin'), Type.Literal('member')])
export type InvitedRole = Static<typeof InvitedRole>

export const TeamMember = Type.Object({
  userId: Type.String(),
  role: Role,
  email: Type.Union([Type.String(), Type.Null()]),
  wallet: Type.Union([Type.String(), Type.Null()]),
  joinedAt: Type.String({ description: 'ISO 8601' }),
})
export type TeamMember = Static<typeof TeamMember>

export const PendingInvite = Type.Object({
  email: Type.String(),
  role: InvitedRole,
  expiresAt: Type.String({ description: 'ISO 8601' }),
})
export type PendingInvite = Static<typeof PendingInvite>

export const Team = Type.Object({
  members: Type.Array(TeamMember),
  invites: Type.Array(PendingInvite),
})
export type Team = Static<typeof Team>

export const Invite = Type.Object(
  { email: Email, role: InvitedRole },
  { additionalProperties: false },
)
export type Invite = Static<typeof Invite>

export const RoleChange = Type.Object({ role: InvitedRole }, { additionalProperties: false })
export type RoleChange = Static<typeof RoleChange>

export const MemberParams = Type.Object({ userId: Type.String({ minLength: 1, maxLength: 64 }) })

export const InviteParams = Type.Object({ email: Email })

/** Leaving a team: the account the session acts for now, or null when the user has none left and the session ended. */
export const Left = Type.Object({
  ok: Type.Literal(true),
  accountId: Type.Union([Type.String(), Type.Null()]),
})
export type Left = Static<typeof Left>
