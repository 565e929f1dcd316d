/** The roles an owner can give, why the owner's actions are disabled for this session, and the column that says so. */
import type { InvitedRole } from '../../../../shared/schemas/admin/team.ts'
import { useAbilities } from '../../session.tsx'
import { Badge } from '../../ui.tsx'

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

/** The heading of a team table's actions column, marked with who may use them. */
export function OwnerActionsHeading() {
  const blocked = useTeamBlock()
  return (
    <th scope="col">
      Actions <Badge tone={blocked() ? 'warn' : 'neutral'}>{blocked() ?? 'Owner only'}</Badge>
    </th>
  )
}
