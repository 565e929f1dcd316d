/**
 * The account's own limits, shared by all its keys: requests and tokens per minute and requests at once.
 * An empty field is the service's default (shown under it); 0 is no limit. Owner and admins change them.
 * Each field is checked against the schema's bounds before saving, every problem under its field.
 */
import { createAsync, revalidate } from '@solidjs/router'
import { createSignal, For, Show } from 'solid-js'
import type {
  AccountLimits,
  AccountLimitsChanges,
} from '../../../../shared/schemas/admin/policy.ts'
import { ACCOUNT_LIMIT, LIMIT_LABELS } from '../../../../shared/schemas/admin/field-rules.ts'
import { api } from '../../api.ts'
import { getAccountLimits } from '../../data.ts'
import { focusFirstInvalid, useFormCheck } from '../../form-check.ts'
import { fieldError, formError, TextField, useSubmit } from '../../forms.tsx'
import { announce, Button, Card, ErrorNotice, Loaded } from '../../ui.tsx'
import { readWhole } from '../policy/amounts.ts'
import { useManageBlock } from '../policy/read-only.tsx'

const NAMES = ['rpmLimit', 'tpmLimit', 'concurrency'] as const

type Name = (typeof NAMES)[number]

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
  const blocked = useManageBlock()
  const [saved, setSaved] = createSignal(props.current)
  const [values, setValues] = createSignal<Record<Name, string>>({
    rpmLimit: text(props.current.rpmLimit),
    tpmLimit: text(props.current.tpmLimit),
    concurrency: text(props.current.concurrency),
  })
  const submit = useSubmit()
  const check = useFormCheck((field) => {
    const changes: AccountLimitsChanges = {}
    for (const name of NAMES)
      changes[name] = field(() => readWhole(values()[name], name, ACCOUNT_LIMIT))
    return changes
  })
  const error = (name: Name) => check.error(name) ?? fieldError(submit.error(), name)
  const save = async (event: SubmitEvent) => {
    event.preventDefault()
    const form = event.currentTarget as HTMLFormElement
    const changes = check.take()
    if (!changes) {
      submit.clear()
      return focusFirstInvalid(form)
    }
    const answer = await submit.run(() => api<AccountLimits>('PATCH', '/account/limits', changes))
    if (answer) {
      setSaved(answer)
      announce('Account limits saved.')
    } else focusFirstInvalid(form)
  }
  const hint = (name: Name) => {
    const inForce = saved().effective[name]
    const shown = inForce === 0 ? 'no limit' : inForce.toLocaleString()
    return saved()[name] === null
      ? `Empty: the service's default, now ${shown}.`
      : `In force: ${shown}. Empty it for the default.`
  }
  const generalError = () => formError(submit.error(), NAMES)
  return (
    <form class="stack" onSubmit={save} novalidate>
      <p class="small muted">
        Shared by every key of the account, on top of each key's own limits. 0 is no limit.
      </p>
      <div class="row wrap">
        <For each={NAMES}>
          {(name) => (
            <TextField
              label={LIMIT_LABELS[name]}
              inputmode="numeric"
              value={values()[name]}
              onValue={(value) => setValues({ ...values(), [name]: value })}
              hint={hint(name)}
              error={error(name)}
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
          title={blocked()}
        >
          Save limits
        </Button>
      </div>
    </form>
  )
}
