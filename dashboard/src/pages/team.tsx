/**
 * The account's team: members with their roles, pending invitations, and (for the owner) inviting by
 * e-mail, changing roles and removing members. Other roles see the same lists with the owner's actions
 * marked and disabled, and may leave the account. An accountless account has no team until it is claimed:
 * the page says why and shows the claim request, and lets the owner replace or revoke the dashboard link.
 */
import { createAsync, revalidate } from '@solidjs/router'
import { createSignal, For, Show } from 'solid-js'
import type { InvitedRole, TeamMember } from '../../../shared/schemas/admin/team.ts'
import { api } from '../api.ts'
import { getTeam } from '../data.ts'
import { dateTime } from '../format.ts'
import { useSession } from '../session.tsx'
import { shortWallet } from '../shell.tsx'
import { ConfirmButton, Dialog } from '../dialogs.tsx'
import { SelectField, useSubmit } from '../forms.tsx'
import { announce, Badge, Button, Card, Empty, ErrorNotice, Loaded, Page } from '../ui.tsx'
import { ClaimAccount } from './team/claim-account.tsx'
import { InviteForm, Invites } from './team/invites.tsx'
import { LeaveTeam } from './team/leave-team.tsx'
import { OwnerActionsHeading, ROLE_OPTIONS, useTeamBlock } from './team/roles.tsx'
import { DashboardLinkCard } from './team/dashboard-link.tsx'

/** After a change the team is read again. */
const rereadTeam = () => revalidate(getTeam.key)

export default function Team() {
  const { me } = useSession()
  return (
    <Page
      title="Team"
      description="Who can use this account, and what each role may do. The owner tops up and manages the team."
    >
      <Show
        when={me().account.kind === 'identity'}
        fallback={
          <>
            <ClaimAccount />
            <DashboardLinkCard />
          </>
        }
      >
        <OwnerOnlyNote />
        <TeamLists />
        <InviteForm onInvited={() => void rereadTeam()} />
        <LeaveTeam />
      </Show>
    </Page>
  )
}

/** Members and pending invitations: read only for an account that can have a team. */
function TeamLists() {
  const team = createAsync(() => getTeam())
  return (
    <Loaded data={team} retry={rereadTeam}>
      {(list) => (
        <>
          <Members members={list.members} onChanged={() => void rereadTeam()} />
          <Invites invites={list.invites} onChanged={() => void rereadTeam()} />
        </>
      )}
    </Loaded>
  )
}

function OwnerOnlyNote() {
  const { me } = useSession()
  const blocked = useTeamBlock()
  return (
    <Show when={blocked()}>
      <p class="small muted">
        You are {me().role === 'admin' ? 'an admin' : `a ${me().role}`} of this account.{' '}
        {blocked() === 'Owner only'
          ? 'Only the owner can invite people, change roles and remove members: those actions are marked “Owner only” below.'
          : 'The account is suspended: the team cannot be changed until it is active again.'}
      </p>
    </Show>
  )
}

function memberName(member: TeamMember): string {
  return member.email || shortWallet(member.wallet) || member.userId
}

function Members(props: { members: TeamMember[]; onChanged: () => void }) {
  const { me } = useSession()
  const blocked = useTeamBlock()
  const [changing, setChanging] = createSignal<TeamMember>()
  const remove = async (member: TeamMember) => {
    await api('DELETE', `/team/${encodeURIComponent(member.userId)}`)
    announce(`${memberName(member)} was removed.`)
    props.onChanged()
  }
  return (
    <Card title="Members">
      <Show when={props.members.length > 0} fallback={<Empty title="No members yet" />}>
        <div class="table-wrap">
          <table class="team-table narrow-cards">
            <thead>
              <tr>
                <th scope="col">Member</th>
                <th scope="col">Role</th>
                <th scope="col">Joined</th>
                <OwnerActionsHeading />
              </tr>
            </thead>
            <tbody>
              <For each={props.members}>
                {(member) => (
                  <tr>
                    <td>
                      <span class={member.email ? '' : 'mono'} title={member.wallet ?? undefined}>
                        {memberName(member)}
                      </span>
                      <Show when={member.userId === me().user?.id}>
                        {' '}
                        <Badge>You</Badge>
                      </Show>
                    </td>
                    <td data-label="Role">
                      <Badge tone={member.role === 'owner' ? 'good' : 'neutral'}>
                        {member.role}
                      </Badge>
                    </td>
                    <td class="nowrap" data-label="Joined">
                      {dateTime(member.joinedAt)}
                    </td>
                    <td>
                      <Show
                        when={member.role !== 'owner'}
                        fallback={
                          <span class="small muted">The owner cannot be changed or removed</span>
                        }
                      >
                        <div class="row">
                          <Button disabled={!!blocked()} onClick={() => setChanging(member)}>
                            Change role<span class="visually-hidden"> of {memberName(member)}</span>
                          </Button>
                          <ConfirmButton
                            label="Remove"
                            ariaLabel={`Remove ${memberName(member)}`}
                            title={`Remove ${memberName(member)}?`}
                            confirmLabel="Remove member"
                            disabled={!!blocked()}
                            onConfirm={() => remove(member)}
                          >
                            <p>
                              They lose access to this account at once: their sessions for it end.
                              Their own sign-in and any other accounts they belong to are not
                              touched. You can invite them again later.
                            </p>
                          </ConfirmButton>
                        </div>
                      </Show>
                    </td>
                  </tr>
                )}
              </For>
            </tbody>
          </table>
        </div>
      </Show>
      <Show when={changing()}>
        {(member) => (
          <RoleDialog member={member()} onClose={() => setChanging()} onChanged={props.onChanged} />
        )}
      </Show>
    </Card>
  )
}

/** Changing a role is confirmed in a dialog: the new role takes effect on the member's next request. */
function RoleDialog(props: { member: TeamMember; onClose: () => void; onChanged: () => void }) {
  const [role, setRole] = createSignal<InvitedRole>(
    props.member.role === 'admin' ? 'member' : 'admin',
  )
  const submit = useSubmit()
  const save = async (event: SubmitEvent) => {
    event.preventDefault()
    const done = await submit.run(() =>
      api('PATCH', `/team/${encodeURIComponent(props.member.userId)}`, { role: role() }),
    )
    if (!done) return
    announce(`${memberName(props.member)} is now ${role() === 'admin' ? 'an admin' : 'a member'}.`)
    props.onChanged()
    props.onClose()
  }
  return (
    <Dialog open title={`Change the role of ${memberName(props.member)}`} onClose={props.onClose}>
      <form class="stack" onSubmit={save}>
        <p>
          Now: <strong>{props.member.role}</strong>. The new role applies from their next request.
        </p>
        <SelectField
          label="New role"
          value={role()}
          onValue={(value) => setRole(value as InvitedRole)}
          options={ROLE_OPTIONS}
        />
        <Show when={submit.error()}>
          <ErrorNotice error={submit.error()} />
        </Show>
        <div class="dialog-actions">
          <Button variant="ghost" onClick={() => props.onClose()}>
            Cancel
          </Button>
          <Button
            type="submit"
            variant="primary"
            busy={submit.busy()}
            disabled={role() === props.member.role}
          >
            Change role
          </Button>
        </div>
      </form>
    </Dialog>
  )
}
