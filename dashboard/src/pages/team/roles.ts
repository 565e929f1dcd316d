/** The roles an owner can give, and why the owner's actions are disabled for this session. */
import type { InvitedRole } from '../../../../shared/schemas/admin/team.ts'
import { useAbilities } from '../../session.tsx'

export const ROLE_OPTIONS: { value: InvitedRole; label: string }[] = [
  { value: 'member', label: 'Member: reads everything, uses the playground and support' },
  { value: 'admin', label: 'Admin: also manages keys, presets, guardrails and routing' },
]

/** Why the owner's actions are disabled for this session, or undefined when they are not. */
export function useTeamBlock(): () => string | undefined {
  const can = useAbilities()
  return () =>
    can().team ? undefined : can().owner ? 'Not while the account is suspended' : 'Owner only'
}
