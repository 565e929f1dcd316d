/**
 * Why a page's write controls are disabled: a member reads but only the owner and admins change keys
 * and policy; a suspended account reads only. The server refuses the same (permissions.ts).
 */
import { A } from '@solidjs/router'
import { Show } from 'solid-js'
import { useSession } from '../../session.tsx'
import { Notice } from '../../ui.tsx'

/** The note to show when `useAbilities().manage` is false; `what` names the page's things ("keys"). */
export function ReadOnlyNote(props: { what: string }) {
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
        This account is suspended: its {props.what} can be read but not changed. Its owner and
        admins can change them again once the suspension is lifted;{' '}
        <A href="/dashboard/support">write to support</A>.
      </Show>
    </Notice>
  )
}

/** The tooltip of a disabled write control. */
export const OWNER_OR_ADMIN = 'Only the account owner and admins can change this'
