/**
 * Adding credit. The server decides who may (the owner; an accountless account once both secrets are
 * confirmed saved; not while suspended) and says why not: the reason stands next to the disabled button.
 * Until online payments exist the step answers with instructions to ask the operator.
 */
import { createSignal, createUniqueId, Show } from 'solid-js'
import type { TopUp } from '../../../../shared/schemas/admin/billing.ts'
import { api } from '../../api.ts'
import { getBilling } from '../../data.ts'
import { useSubmit } from '../../forms.tsx'
import { createOptional } from '../../reading.ts'
import { Badge, Button, Card, CopyButton, ErrorNotice, Notice } from '../../ui.tsx'

export function TopUpCard() {
  const reasonId = createUniqueId()
  const submit = useSubmit()
  const [answer, setAnswer] = createSignal<TopUp>()
  // Whether this session may top up comes with the balance; the balance card shows that read's states.
  const billing = createOptional(() => getBilling())
  const topUp = () => billing.latest()?.topUp
  const start = async () => {
    const result = await submit.run(() => api<TopUp>('POST', '/billing/top-up'))
    if (result) setAnswer(result)
  }
  return (
    <Card title="Add credit" actions={<Badge>Owner only</Badge>}>
      <div class="row center">
        <Button
          variant="primary"
          busy={submit.busy()}
          disabled={!topUp()?.allowed}
          aria-describedby={topUp()?.reason ? reasonId : undefined}
          onClick={start}
        >
          Top up
        </Button>
        <Show when={topUp()?.reason}>
          <p class="small muted reason" id={reasonId}>
            {topUp()!.reason}
          </p>
        </Show>
      </div>
      <Show when={submit.error()}>
        <ErrorNotice error={submit.error()} />
      </Show>
      <Show when={answer()}>
        {(result) => (
          <Notice title="How to add credit">
            <p>{result().instructions}</p>
            <div class="row center">
              <span class="small">
                Account ID <code class="mono">{result().accountId}</code>
              </span>
              <CopyButton text={result().accountId} label="Copy account ID" variant="ghost" />
            </div>
          </Notice>
        )}
      </Show>
    </Card>
  )
}
