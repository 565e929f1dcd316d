/**
 * Leaving the account, for a signed-in member who is not its owner. The confirmation says what ends (their
 * access, on every browser, and their browsers' credit alerts of it), what stays (the account's keys, also
 * those they created), and where they go next: the most recent of their other accounts, as a sign-in picks,
 * or the sign-in page when they have none. The owner is told why they cannot leave and what to do instead.
 */
import { A, revalidate, useNavigate } from '@solidjs/router'
import { Match, Switch } from 'solid-js'
import type { Left } from '../../../../shared/schemas/admin/team.ts'
import { api } from '../../api.ts'
import { ConfirmButton } from '../../dialogs.tsx'
import { useSession } from '../../session.tsx'
import { announce, Card } from '../../ui.tsx'

export function LeaveTeam() {
  const { me } = useSession()
  const navigate = useNavigate()
  const account = () => me().account.id
  // `/me` lists memberships oldest first: the last other one is where the server moves the session.
  const next = () =>
    me()
      .memberships.filter((entry) => entry.accountId !== account())
      .at(-1)
  const leave = async () => {
    const left = account()
    const answer = await api<Left>('POST', '/team/leave')
    if (answer.accountId === null) {
      // A full load, as signing out is: nothing read for the account stays in memory for Back to show.
      window.location.replace(`/sign-in?left=${encodeURIComponent(left)}`)
      return
    }
    // Everything read so far was the left account's: every query is read again before the next page shows.
    await revalidate()
    navigate('/dashboard')
    announce(`You left account ${left}. You are now in account ${answer.accountId}.`)
  }
  return (
    <Switch>
      <Match when={me().via === 'user' && me().role !== 'owner'}>
        <Card title="Leave this account">
          <p>
            Leaving takes you out of this account's team: you no longer see or use it. To come back
            you need a new invitation from its owner.
          </p>
          <div class="row">
            <ConfirmButton
              label="Leave team"
              title={`Leave account ${account()}?`}
              confirmLabel="Leave team"
              onConfirm={leave}
            >
              <p>
                You lose access at once, in this browser and wherever else you are signed in to this
                account, and its credit alerts stop reaching your browsers.
              </p>
              <p>
                API keys stay with the account, including any you created: they keep working until
                the owner or an admin revokes them.
              </p>
              <p>
                {next()
                  ? `You then go on in account ${next()!.accountId} (${next()!.role}).`
                  : 'You belong to no other account, so you are signed out. Signing in again starts a new account of your own.'}
              </p>
            </ConfirmButton>
          </div>
        </Card>
      </Match>
      <Match when={me().via === 'user' && me().role === 'owner'}>
        <Card title="Leave this account">
          <p class="small muted">
            You own this account, so you cannot leave it: ownership is not transferable here. To
            hand it to another member, <A href="/dashboard/support">write to support</A>.
          </p>
        </Card>
      </Match>
    </Switch>
  )
}
