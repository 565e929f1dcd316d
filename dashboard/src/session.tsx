/**
 * The signed-in session as every page sees it: who acts for which account with which role, and what
 * that role may do (the same rules as the server's permissions.ts; the server decides, the pages only
 * mark and disable what would be refused).
 */
import { createContext, useContext, type Accessor } from 'solid-js'
import type { Me } from '../../shared/schemas/admin/session.ts'

export type SessionView = {
  me: Accessor<Me>
  refresh: () => Promise<unknown>
}

export const SessionContext = createContext<SessionView>()

export function useSession(): SessionView {
  const session = useContext(SessionContext)
  if (!session) throw new Error('useSession outside the signed-in shell')
  return session
}

/** What the session's role allows (suspended accounts keep reading, support and revoking keys). */
export function abilities(me: Me) {
  const active = me.account.status === 'active'
  const managing = me.role === 'owner' || me.role === 'admin'
  return {
    manage: active && managing,
    /** Revoking only takes access away: a leaked key can be stopped during a suspension too. */
    revoke: managing,
    owner: me.role === 'owner',
    billing: active && me.role === 'owner',
    /** A leaked dashboard link can be replaced or revoked during a suspension too. */
    link: me.role === 'owner',
    team: active && me.role === 'owner',
    chat: active,
    identity: me.account.kind === 'identity',
  }
}

export function useAbilities() {
  const { me } = useSession()
  return () => abilities(me())
}
