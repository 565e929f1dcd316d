/**
 * Why a page's write controls are disabled: a member reads but only the owner and admins change keys
 * and policy; a suspended account reads only, and revokes keys. The server refuses the same
 * (permissions.ts).
 */
import { A } from '@solidjs/router'
import { Show } from 'solid-js'
import { useAbilities, useSession } from '../../session.tsx'
import { Notice } from '../../ui.tsx'

/**
 * The note to show when `useAbilities().manage` is false; `what` names the page's things ("keys"),
 * `stillAllowed` what a suspended account's owner and admins can still do with them.
 */
export function ReadOnlyNote(props: { what: string; stillAllowed?: string }) {
  const { me } = useSession()
  return (
    <Notice title="Read only">
      <Show
        when={me().account.status === 'suspended'}
        fallback={
          <>
            You are a {me().role} of this account: you can see its {props.what}. Only the account's
            owner and admins can change them.
          </>
        }
      >
        This account is suspended: its {props.what} can be read but not changed.{' '}
        {props.stillAllowed ? `${props.stillAllowed} ` : ''}Its owner and admins can change them
        again once the suspension is lifted; <A href="/dashboard/support">write to support</A>.
      </Show>
    </Notice>
  )
}

/** The tooltip of a write control disabled for the session's role. */
export const OWNER_OR_ADMIN = 'Only the account owner and admins can change this'

/** The tooltip of a write control the session's role may use, disabled while the account is suspended. */
export const NOT_WHILE_SUSPENDED = 'Not while the account is suspended'

/** Why the page's write controls are disabled (their tooltip), or undefined when they are not. */
export function useManageBlock(): () => string | undefined {
  const can = useAbilities()
  return () => (can().manage ? undefined : can().revoke ? NOT_WHILE_SUSPENDED : OWNER_OR_ADMIN)
}
