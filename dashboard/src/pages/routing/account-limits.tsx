/**
 * The account's own limits, shared by all its keys: requests and tokens per minute and requests at once.
 * An empty field is the service's default (shown under it); 0 is no limit. Owner and admins change them.
 */
import { createAsync, revalidate } from '@solidjs/router'
import { createSignal, For, Show } from 'solid-js'
import type {
  AccountLimits,
  AccountLimitsChanges,
} from '../../../../shared/schemas/admin/policy.ts'
import { api } from '../../api.ts'
import { getAccountLimits } from '../../data.ts'
import { fieldError, TextField, useSubmit } from '../../forms.tsx'
import { announce, Button, Card, ErrorNotice, Loaded } from '../../ui.tsx'
import { OWNER_OR_ADMIN } from '../policy/read-only.tsx'

const FIELDS = [
  { name: 'rpmLimit', label: 'Requests per minute' },
  { name: 'tpmLimit', label: 'Tokens per minute' },
  { name: 'concurrency', label: 'Requests at once' },
] as const

type Name = (typeof FIELDS)[number]['name']

export function AccountLimitsCard(props: { canManage: boolean }) {
  const limits = createAsync(() => getAccountLimits())
  return (
    <Card title="Account limits">
      <Loaded data={limits} retry={() => revalidate(getAccountLimits.key)}>
        {(current) => <LimitsForm current={current} canManage={props.canManage} />}
      </Loaded>
    </Card>
  )
}

const text = (value: number | null) => (value === null ? '' : String(value))

function LimitsForm(props: { current: AccountLimits; canManage: boolean }) {
  // The form keeps what was saved last itself, so saving does not rebuild it.
  const [saved, setSaved] = createSignal(props.current)
  const [values, setValues] = createSignal<Record<Name, string>>({
    rpmLimit: text(props.current.rpmLimit),
    tpmLimit: text(props.current.tpmLimit),
    concurrency: text(props.current.concurrency),
  })
  const submit = useSubmit()
  const save = async (event: SubmitEvent) => {
    event.preventDefault()
    const changes: Record<string, unknown> = {}
    for (const { name } of FIELDS) {
      const value = values()[name].trim()
      // The server checks the number and names the field: what is not a whole number goes as typed.
      changes[name] = value === '' ? null : /^\d+$/.test(value) ? Number(value) : value
    }
    const answer = await submit.run(() =>
      api<AccountLimits>('PATCH', '/account/limits', changes as AccountLimitsChanges),
    )
    if (answer) {
      setSaved(answer)
      announce('Account limits saved.')
    }
  }
  const hint = (name: Name) => {
    const inForce = saved().effective[name]
    const shown = inForce === 0 ? 'no limit' : inForce.toLocaleString()
    return saved()[name] === null
      ? `Empty: the service's default, now ${shown}.`
      : `In force: ${shown}. Empty it for the default.`
  }
  const generalError = () =>
    FIELDS.some(({ name }) => fieldError(submit.error(), name)) ? undefined : submit.error()
  return (
    <form class="stack" onSubmit={save}>
      <p class="small muted">
        Shared by every key of the account, on top of each key's own limits. 0 is no limit.
      </p>
      <div class="row wrap">
        <For each={FIELDS}>
          {({ name, label }) => (
            <TextField
              label={label}
              inputmode="numeric"
              value={values()[name]}
              onValue={(value) => setValues({ ...values(), [name]: value })}
              hint={hint(name)}
              error={fieldError(submit.error(), name)}
              disabled={!props.canManage}
            />
          )}
        </For>
      </div>
      <Show when={generalError()}>
        <ErrorNotice error={generalError()} />
      </Show>
      <div>
        <Button
          type="submit"
          variant="primary"
          busy={submit.busy()}
          disabled={!props.canManage}
          title={props.canManage ? undefined : OWNER_OR_ADMIN}
        >
          Save limits
        </Button>
      </div>
    </form>
  )
}
