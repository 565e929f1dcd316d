/**
 * The team's pending invitations, and the owner's form to invite someone by e-mail. A missing or
 * malformed address is refused under its field before anything is sent.
 */
import { createSignal, For, Show } from 'solid-js'
import type { MailSent } from '../../../../shared/schemas/admin/sign-in.ts'
import type {
  Invite,
  InvitedRole,
  Team as TeamList,
} from '../../../../shared/schemas/admin/team.ts'
import { api } from '../../api.ts'
import { dateTime, relative } from '../../format.ts'
import { focusFirstInvalid, readEmail, useFormCheck } from '../../form-check.ts'
import { SelectField, TextField, fieldError, formError, useSubmit } from '../../forms.tsx'
import { announce, Badge, Button, Card, ErrorNotice, Notice } from '../../ui.tsx'
import { ConfirmButton } from '../../dialogs.tsx'
import { OwnerActionsHeading, ROLE_OPTIONS, useTeamBlock } from './roles.tsx'

export function Invites(props: { invites: TeamList['invites']; onChanged: () => void }) {
  const blocked = useTeamBlock()
  const withdraw = async (email: string) => {
    await api('DELETE', `/team/invites/${encodeURIComponent(email)}`)
    announce(`The invitation to ${email} was withdrawn.`)
    props.onChanged()
  }
  return (
    <Card title="Pending invitations">
      <Show
        when={props.invites.length > 0}
        fallback={<p class="muted small">No invitations are waiting to be accepted.</p>}
      >
        <div class="table-wrap">
          <table class="team-table narrow-cards">
            <thead>
              <tr>
                <th scope="col">E-mail address</th>
                <th scope="col">Role</th>
                <th scope="col">Expires</th>
                <OwnerActionsHeading />
              </tr>
            </thead>
            <tbody>
              <For each={props.invites}>
                {(invite) => (
                  <tr>
                    <td>{invite.email}</td>
                    <td data-label="Role">
                      <Badge>{invite.role}</Badge>
                    </td>
                    <td data-label="Expires" title={dateTime(invite.expiresAt)}>
                      {relative(invite.expiresAt)}
                    </td>
                    <td>
                      <ConfirmButton
                        label="Withdraw"
                        ariaLabel={`Withdraw the invitation to ${invite.email}`}
                        title={`Withdraw the invitation to ${invite.email}?`}
                        confirmLabel="Withdraw invitation"
                        disabled={!!blocked()}
                        onConfirm={() => withdraw(invite.email)}
                      >
                        <p>
                          The link in the mail stops working at once. You can invite the address
                          again later.
                        </p>
                      </ConfirmButton>
                    </td>
                  </tr>
                )}
              </For>
            </tbody>
          </table>
        </div>
      </Show>
    </Card>
  )
}

export function InviteForm(props: { onInvited: () => void }) {
  const blocked = useTeamBlock()
  const [email, setEmail] = createSignal('')
  const [role, setRole] = createSignal<InvitedRole>('member')
  const [sent, setSent] = createSignal<string>()
  const submit = useSubmit()
  const check = useFormCheck(
    (field): Invite => ({
      email: field(() => readEmail(email(), 'email', 'Enter the e-mail address to invite.')) ?? '',
      role: role(),
    }),
  )
  /** A field's problem: the form's own check first, then the server's refusal. */
  const error = (param: string) => check.error(param) ?? fieldError(submit.error(), param)
  const invite = async (event: SubmitEvent) => {
    event.preventDefault()
    const form = event.currentTarget as HTMLFormElement
    setSent(undefined)
    const invitation = check.take()
    if (!invitation) {
      submit.clear()
      return focusFirstInvalid(form)
    }
    const answer = await submit.run(() => api<MailSent>('POST', '/team/invites', invitation))
    if (!answer) return focusFirstInvalid(form)
    setSent(answer.message)
    setEmail('')
    check.reset()
    announce('Invitation sent.')
    props.onInvited()
  }
  return (
    <Card
      title="Invite someone"
      actions={<Badge tone={blocked() ? 'warn' : 'neutral'}>{blocked() ?? 'Owner only'}</Badge>}
    >
      <form class="stack" onSubmit={invite} novalidate>
        <p class="small muted">
          We e-mail them a link. Opening it signs them in (creating their sign-in if they have none)
          and adds them with the role you choose.
        </p>
        <fieldset class="plain stack" disabled={!!blocked()}>
          <legend class="visually-hidden">Invitation</legend>
          <div class="row">
            <TextField
              label="E-mail address"
              type="email"
              name="email"
              autocomplete="off"
              required
              value={email()}
              onValue={setEmail}
              error={error('email')}
            />
            <SelectField
              label="Role"
              name="role"
              value={role()}
              onValue={(value) => setRole(value as InvitedRole)}
              options={ROLE_OPTIONS}
              error={error('role')}
            />
          </div>
          <Show when={formError(submit.error(), FIELDS)}>
            <ErrorNotice error={submit.error()} />
          </Show>
          <Show when={sent()}>
            <Notice tone="success" title="Invitation sent">
              <p>{sent()}</p>
            </Notice>
          </Show>
          <div class="row">
            <Button type="submit" variant="primary" busy={submit.busy()} disabled={!!blocked()}>
              Send invitation
            </Button>
            <Show when={blocked()}>
              <span class="small muted">
                {blocked() === 'Owner only'
                  ? 'Only the account owner can invite people.'
                  : 'Not while the account is suspended.'}
              </span>
            </Show>
          </div>
        </fieldset>
      </form>
    </Card>
  )
}

const FIELDS = ['email', 'role'] as const
